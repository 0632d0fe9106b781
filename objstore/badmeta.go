package objstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// RemoveBadMeta removes the meta stored under name when it fails the
// checks every other call makes (ErrBadObjectMeta, ErrMetaMismatch):
// meta that someone allowed to publish to $O.<bucket>.M.> planted there,
// which makes Get, Put, Delete and UpdateMeta of name fail until it is
// gone. Afterwards the name is free: Put stores a new object, Get and
// Delete find none.
//
// Only the meta messages of name up to the bad one read are purged, so a
// meta stored since (a Put that raced) stays. No chunk is purged: a bad
// meta's NUID cannot be trusted to name chunks of its own. The chunks of
// an object whose meta the planted one replaced stay in the stream,
// unreferenced.
//
// It fails with ErrObjectNotFound when name has no meta, and with an error
// matching ErrObjectExists, removing nothing, when the meta is valid (use
// Delete).
func (s *Store) RemoveBadMeta(ctx context.Context, name string) error {
	if name == "" {
		return ErrNameRequired
	}
	subject := s.metaSubject(name)
	m, err := s.stream.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		if errors.Is(err, jsapi.ErrMsgNotFound) {
			return ErrObjectNotFound
		}
		if errors.Is(err, conn.ErrNoResponders) {
			err = wrap(ErrBucketNotFound, err)
		}
		return s.streamErr(err)
	}
	if _, err := s.decodeMeta(m.Data, name); err == nil {
		return fmt.Errorf("%w: the meta of %s is valid; Delete removes the object", ErrObjectExists, clip(name))
	}
	if _, err := s.stream.Purge(ctx, jsapi.PurgeSubject(subject), jsapi.PurgeSequence(m.Sequence+1)); err != nil {
		return s.streamErr(err)
	}
	return nil
}
