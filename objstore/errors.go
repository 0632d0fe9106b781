package objstore

import (
	"errors"

	"github.com/natsio/natsio/internal/streamstore"
)

// Errors of the object store, matched with errors.Is. Server errors with
// no object-store meaning are returned as the *jsapi.APIError (wrapped).
var (
	// ErrInvalidStoreName: a store name is empty or holds a character other
	// than a-z, A-Z, 0-9, '_' and '-'. Nothing was sent.
	ErrInvalidStoreName = errors.New("objstore: invalid store name")
	// ErrBucketNotFound: the store (stream OBJ_<bucket>) does not exist.
	ErrBucketNotFound = errors.New("objstore: store not found")
	// ErrBucketExists: CreateStore found the store with a different
	// configuration. It also matches jsapi.ErrStreamNameInUse.
	ErrBucketExists = errors.New("objstore: store exists with a different configuration")
	// ErrNameRequired: an object name is empty.
	ErrNameRequired = errors.New("objstore: object name is required")
	// ErrObjectNotFound: no such object, or it was deleted.
	ErrObjectNotFound = errors.New("objstore: object not found")
	// ErrObjectExists: the name is taken by an object (a link may only
	// replace a link; UpdateMeta may not rename onto an object).
	ErrObjectExists = errors.New("objstore: an object already exists with that name")
	// ErrBadObjectMeta: an object's stored meta information is invalid.
	ErrBadObjectMeta = errors.New("objstore: invalid object meta information")
	// ErrMetaMismatch: the meta stored under a name is not that object's:
	// it names another object or another store, or its NUID is not a
	// plain NUID (22 characters of 0-9, A-Z, a-z). Anyone allowed to
	// publish to $O.<bucket>.M.> can store such meta; the call that found
	// it did nothing (no chunk was purged, no meta written).
	// errors.Is(ErrMetaMismatch, ErrBadObjectMeta) is true.
	ErrMetaMismatch = streamstore.Child("objstore: meta does not belong to the object", ErrBadObjectMeta)
	// ErrDigestMismatch: the data read does not have the object's SHA-256
	// digest.
	ErrDigestMismatch = errors.New("objstore: object digest mismatch")
	// ErrSizeMismatch: the data read does not have the object's size (for
	// example, chunks were removed while reading).
	ErrSizeMismatch = errors.New("objstore: object size mismatch")
	// ErrLinkNotAllowed: Put was given meta with a link; use AddLink.
	ErrLinkNotAllowed = errors.New("objstore: a link cannot be put; use AddLink")
	// ErrObjectRequired: AddLink was given no object (nil or unnamed).
	ErrObjectRequired = errors.New("objstore: object required")
	// ErrNoLinkToDeleted: AddLink was given a deleted object.
	ErrNoLinkToDeleted = errors.New("objstore: not allowed to link to a deleted object")
	// ErrNoLinkToLink: AddLink was given a link.
	ErrNoLinkToLink = errors.New("objstore: not allowed to link to another link")
	// ErrLinkToBucket: Get found a link to a whole store, not an object.
	ErrLinkToBucket = errors.New("objstore: the object is a link to a store")
	// ErrUpdateMetaDeleted: UpdateMeta of a missing or deleted object.
	ErrUpdateMetaDeleted = errors.New("objstore: cannot update meta of a deleted object")
)

// wrap joins an object-store error value with the error that caused it.
func wrap(kind, cause error) error { return streamstore.Wrap(kind, cause) }
