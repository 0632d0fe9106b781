package objstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"

	"github.com/nats-io/nuid"

	"github.com/natsio/natsio/jsapi"
)

// Delete deletes an object: its meta is replaced by a deleted marker
// (deleted:true, size 0) and its chunks are purged. Deleting a link
// deletes the link, not its target. Meta that fails GetInfo's checks
// (ErrBadObjectMeta, ErrMetaMismatch) is left as it is and nothing is
// purged.
func (s *Store) Delete(ctx context.Context, name string) error {
	info, err := s.GetInfo(ctx, name, ShowDeleted())
	if err != nil {
		return err
	}
	subj, err := s.chunkSubject(info.NUID)
	if err != nil {
		return err
	}
	info.Deleted = true
	info.Size, info.Chunks, info.Digest = 0, 0, ""
	if err := s.publishMeta(ctx, info); err != nil {
		return err
	}
	_, err = s.stream.Purge(ctx, jsapi.PurgeSubject(subj))
	return s.streamErr(err)
}

// UpdateMeta changes an object's name, description, headers and metadata
// (not its data or options). An empty meta.Name keeps the name; a new name
// must not be taken by another object (ErrObjectExists). It fails with
// ErrUpdateMetaDeleted for a missing or deleted object.
func (s *Store) UpdateMeta(ctx context.Context, name string, meta Meta) error {
	info, err := s.GetInfo(ctx, name)
	if err != nil {
		if errors.Is(err, ErrObjectNotFound) {
			return ErrUpdateMetaDeleted
		}
		return err
	}
	if meta.Name == "" {
		meta.Name = name
	}
	if meta.Name != name {
		other, err := s.GetInfo(ctx, meta.Name, ShowDeleted())
		if err != nil && !errors.Is(err, ErrObjectNotFound) {
			return err
		}
		if err == nil && !other.Deleted {
			return ErrObjectExists
		}
	}
	info.Name = meta.Name
	info.Description = meta.Description
	info.Headers = meta.Headers
	info.Metadata = meta.Metadata
	if err := s.publishMeta(ctx, info); err != nil {
		return err
	}
	if meta.Name != name {
		_, err := s.stream.Purge(ctx, jsapi.PurgeSubject(s.metaSubject(name)))
		return s.streamErr(err)
	}
	return nil
}

// AddLink stores name as a link to the object obj (of this or another
// store), which must be neither deleted nor a link. name may replace a
// link or a deleted object, not an object (ErrObjectExists).
func (s *Store) AddLink(ctx context.Context, name string, obj *Info) (*Info, error) {
	if name == "" {
		return nil, ErrNameRequired
	}
	if obj == nil || obj.Name == "" {
		return nil, ErrObjectRequired
	}
	if obj.Deleted {
		return nil, ErrNoLinkToDeleted
	}
	if obj.IsLink() {
		return nil, ErrNoLinkToLink
	}
	return s.addLink(ctx, name, &Link{Bucket: obj.Bucket, Name: obj.Name})
}

// AddBucketLink stores name as a link to the whole store target.
func (s *Store) AddBucketLink(ctx context.Context, name string, target *Store) (*Info, error) {
	if name == "" {
		return nil, ErrNameRequired
	}
	if target == nil {
		return nil, fmt.Errorf("%w: nil store", conn.ErrInvalidOption)
	}
	return s.addLink(ctx, name, &Link{Bucket: target.name})
}

func (s *Store) addLink(ctx context.Context, name string, l *Link) (*Info, error) {
	old, err := s.GetInfo(ctx, name, ShowDeleted())
	switch {
	case err == nil && !old.IsLink() && !old.Deleted:
		return nil, ErrObjectExists
	case err != nil && !errors.Is(err, ErrObjectNotFound):
		return nil, err
	}
	info := &Info{Meta: Meta{Name: name, Opts: &MetaOptions{Link: l}}, Bucket: s.name, NUID: nuid.Next()}
	if err := s.publishMeta(ctx, info); err != nil {
		return nil, err
	}
	info.ModTime = time.Now().UTC()
	return info, nil
}
