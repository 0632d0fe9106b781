package kv

import (
	"errors"

	"github.com/natsio/natsio/internal/streamstore"
	"github.com/natsio/natsio/jsapi"
)

// Errors of the key-value store, matched with errors.Is. Errors reported by
// the server that have no KV meaning are returned as the *jsapi.APIError
// (wrapped), so they also match the jsapi sentinels.
var (
	// ErrInvalidBucketName: a bucket name is empty or holds a character
	// other than a-z, A-Z, 0-9, '_' and '-'. Nothing was sent.
	ErrInvalidBucketName = errors.New("kv: invalid bucket name")
	// ErrInvalidKey: a key is empty, holds a character other than
	// a-z, A-Z, 0-9 and "-/_=.", starts or ends with '.', or holds "..";
	// or a watch filter is not such a key with "*" / ">" tokens. Nothing
	// was sent.
	ErrInvalidKey = errors.New("kv: invalid key")
	// ErrHistoryTooLarge: Config.History is above MaxHistory.
	ErrHistoryTooLarge = errors.New("kv: history limited to a max of 64")
	// ErrBucketNotFound: the bucket (stream KV_<bucket>) does not exist.
	// It also matches jsapi.ErrStreamNotFound when the server said so.
	ErrBucketNotFound = errors.New("kv: bucket not found")
	// ErrBucketExists: CreateBucket found the bucket with a different
	// configuration. It also matches jsapi.ErrStreamNameInUse.
	ErrBucketExists = errors.New("kv: bucket exists with a different configuration")
	// ErrBadBucket: the stream behind the bucket is not a KV stream.
	ErrBadBucket = errors.New("kv: stream is not a valid KV bucket")
	// ErrKeyNotFound: the key has no value (never written, purged, or
	// expired). A deleted key's error (ErrKeyDeleted) matches it too.
	ErrKeyNotFound = errors.New("kv: key not found")
	// ErrKeyDeleted: the key's latest entry is a delete or purge marker.
	// errors.Is(ErrKeyDeleted, ErrKeyNotFound) is true.
	ErrKeyDeleted = streamstore.Child("kv: key was deleted", ErrKeyNotFound)
	// ErrKeyExists: Create found a value for the key. It also matches
	// jsapi.ErrWrongLastSequence.
	ErrKeyExists = errors.New("kv: key exists")
	// ErrRevisionMismatch: Update (or Delete with LastRevision, Purge with
	// PurgeLastRevision) found
	// another latest revision — a compare-and-set conflict. Both server
	// codes (10071 and 10164) produce it; it also matches
	// jsapi.ErrWrongLastSequence.
	ErrRevisionMismatch = errors.New("kv: key revision mismatch")
	// ErrUnknownOperation: an entry's KV-Operation header is neither DEL
	// nor PURGE (nor PUT): it was not written by a KV client, and it is
	// not taken for a value. Get and GetRevision of such an entry fail
	// with it; watches, ListKeys, Keys, History and PurgeDeletes skip the
	// entry and count it (Bucket.SkippedEntries).
	ErrUnknownOperation = errors.New("kv: entry with an unknown KV-Operation")
	// ErrTTLOnDelete: a TTL given to Delete. Delete takes a DeleteOpt,
	// which has no TTL (PurgeTTL is a PurgeOpt), so the compiler refuses
	// it and no call returns this error; it is kept for code that
	// compares with it.
	ErrTTLOnDelete = errors.New("kv: TTL is not supported on delete")
	// ErrLimitMarkerTTLNotSupported: the server's JetStream API level is
	// below 1 (server < 2.11), so per-key TTLs and limit markers are not
	// available. The error also holds the *jsapi.FeatureError
	// (errors.As). A per-key TTL given to a bucket on such a server fails
	// with the *jsapi.FeatureError alone, before anything is sent.
	ErrLimitMarkerTTLNotSupported = errors.New("kv: limit marker TTLs not supported by server")
)

// wrap joins a KV error value with the error that caused it, so that both
// match with errors.Is and the message says what the server said.
func wrap(kind, cause error) error { return streamstore.Wrap(kind, cause) }

// isWrongLastSeq reports whether err is a wrong-last-sequence API error
// (either code: jsapi matches 10071 and 10164 to the same sentinel).
func isWrongLastSeq(err error) bool { return errors.Is(err, jsapi.ErrWrongLastSequence) }
