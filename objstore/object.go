package objstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// Meta is what the user says about an object.
type Meta struct {
	// Name identifies the object in its store; any non-empty string.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Headers are the object's user headers (keys are case-sensitive;
	// build them with proto.HeaderOf or Add). They are stored as nats.go
	// stores its nats.Header, a JSON object of each key to the list of its
	// values, keys sorted (see proto.Header.MarshalJSON), and left out when
	// there are none; read back, keys come in sorted order.
	Headers  proto.Header      `json:"headers,omitzero"`
	Metadata map[string]string `json:"metadata,omitempty"`
	// Opts holds the chunk size; links are set by AddLink and
	// AddBucketLink only.
	Opts *MetaOptions `json:"options,omitempty"`
}

// MetaOptions are an object's storage options.
type MetaOptions struct {
	Link *Link `json:"link,omitempty"`
	// ChunkSize is the size of the chunks the data is stored in (0:
	// DefaultChunkSize).
	ChunkSize uint32 `json:"max_chunk_size,omitempty"`
}

// Link points at an object (Name set) or a whole store (Name empty).
type Link struct {
	Bucket string `json:"bucket"`
	Name   string `json:"name,omitempty"`
}

// Info is an object's meta and what the store knows about it: the meta
// message of ADR-20, field for field.
type Info struct {
	Meta
	Bucket string `json:"bucket"`
	// NUID names the chunk subject $O.<bucket>.C.<NUID>.
	NUID string `json:"nuid"`
	Size uint64 `json:"size"`
	// ModTime is when the meta was stored (the stored JSON carries the zero
	// time, as nats.go writes it; readers take the message's time).
	ModTime time.Time `json:"mtime"`
	Chunks  uint32    `json:"chunks"`
	// Digest is "SHA-256=" and the padded base64url SHA-256 of the data.
	Digest  string `json:"digest,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
}

// IsLink reports whether the object is a link.
func (i *Info) IsLink() bool { return i.Opts != nil && i.Opts.Link != nil }

const digestPrefix = "SHA-256="

// digestOf formats a SHA-256 as the meta's digest.
func digestOf(h hash.Hash) string {
	var sum [sha256.Size]byte
	return digestPrefix + base64.URLEncoding.EncodeToString(h.Sum(sum[:0]))
}

// decodeDigest returns the SHA-256 of a meta digest.
func decodeDigest(d string) ([]byte, error) {
	_, b64, ok := strings.Cut(d, "=")
	if !ok {
		return nil, fmt.Errorf("%w: digest %q", ErrBadObjectMeta, d)
	}
	sum, err := base64.URLEncoding.DecodeString(b64)
	if err != nil || len(sum) != sha256.Size {
		return nil, fmt.Errorf("%w: digest %q", ErrBadObjectMeta, d)
	}
	return sum, nil
}

// metaSubject is the subject of name's meta: padded base64url of the name.
func (s *Store) metaSubject(name string) string {
	return s.metaPre + base64.URLEncoding.EncodeToString([]byte(name))
}

// Opt is an option of the Get calls, GetInfo and List, made by
// ShowDeleted. The zero Opt is invalid: it fails the call with an error
// matching conn.ErrInvalidOption, before anything is sent.
type Opt struct{ showDeleted bool }

// ShowDeleted includes deleted objects: GetInfo returns their info, Get an
// empty reader, List lists them.
func ShowDeleted() Opt { return Opt{showDeleted: true} }

// showDeleted reports whether opts hold ShowDeleted, or that one is the
// zero Opt.
func showDeleted(opts []Opt) (bool, error) {
	show := false
	for _, o := range opts {
		if !o.showDeleted {
			return false, fmt.Errorf("%w: zero Opt", conn.ErrInvalidOption)
		}
		show = true
	}
	return show, nil
}

// GetInfo returns an object's information. It fails with ErrObjectNotFound
// when there is no such object or it is deleted (unless ShowDeleted), with
// ErrBadObjectMeta when the stored meta is not valid JSON, and with
// ErrMetaMismatch when it names another object or store, or a NUID that
// is not a plain NUID. Every call that reads an object's meta (Get,
// Delete, Put replacing an object, UpdateMeta, AddLink) goes through it,
// so none of them acts on meta that fails these checks.
func (s *Store) GetInfo(ctx context.Context, name string, opts ...Opt) (*Info, error) {
	if name == "" {
		return nil, ErrNameRequired
	}
	show, err := showDeleted(opts)
	if err != nil {
		return nil, err
	}
	m, err := s.stream.GetLastMsgForSubject(ctx, s.metaSubject(name))
	if err != nil {
		if errors.Is(err, jsapi.ErrMsgNotFound) {
			return nil, ErrObjectNotFound
		}
		if errors.Is(err, conn.ErrNoResponders) {
			err = wrap(ErrBucketNotFound, err)
		}
		return nil, s.streamErr(err)
	}
	info, err := s.decodeMeta(m.Data, name)
	if err != nil {
		return nil, err
	}
	if info.Deleted && !show {
		return nil, ErrObjectNotFound
	}
	info.ModTime = m.Time
	return info, nil
}

// publishMeta stores info as its name's meta, replacing the previous one
// (Nats-Rollup: sub). The stored mtime is the zero time.
func (s *Store) publishMeta(ctx context.Context, info *Info) error {
	stored := *info
	stored.ModTime = time.Time{}
	data, err := json.Marshal(&stored)
	if err != nil {
		return err
	}
	_, err = s.js.Publish(ctx, s.metaSubject(info.Name), data, jsapi.Rollup(jsapi.HeaderRollupValueSubject))
	return kind.PubErr(err)
}

// purgeChunks removes the chunks of nuid, also when ctx has ended. It
// purges nothing when nuid is not a NUID.
func (s *Store) purgeChunks(ctx context.Context, nuid string) error {
	subj, err := s.chunkSubject(nuid)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jsapi.DefaultTimeout)
	defer cancel()
	_, err = s.stream.Purge(ctx, jsapi.PurgeSubject(subj))
	return err
}

// nuidLen is the length of a NUID (github.com/nats-io/nuid, which nats.go
// uses too): 12 random and 10 sequential base-62 digits.
const nuidLen = 22

// validNUID reports whether id is a NUID: nuidLen characters of 0-9, A-Z
// and a-z. Only such a value becomes a token of a chunk subject, so a
// stored "nuid" such as ">", "*" or "a.b" can never widen a purge or a
// read to other objects' chunks.
func validNUID(id string) bool {
	if len(id) != nuidLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// chunkSubject is the subject of the chunks of the object with NUID id, or
// ErrMetaMismatch when id is not a NUID.
func (s *Store) chunkSubject(id string) (string, error) {
	if !validNUID(id) {
		return "", fmt.Errorf("%w: NUID %s", ErrMetaMismatch, clip(id))
	}
	return s.chunkPre + id, nil
}

// decodeMeta decodes the meta message stored on name's meta subject and
// checks that it belongs there: it names name, this store, and a plain
// NUID (links and deleted markers carry one too).
func (s *Store) decodeMeta(data []byte, name string) (*Info, error) {
	info := new(Info)
	if err := json.Unmarshal(data, info); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadObjectMeta, err)
	}
	switch {
	case info.Name != name:
		return nil, fmt.Errorf("%w: the meta of %s names the object %s", ErrMetaMismatch, clip(name), clip(info.Name))
	case info.Bucket != s.name:
		return nil, fmt.Errorf("%w: the meta of %s names the store %s", ErrMetaMismatch, clip(name), clip(info.Bucket))
	case !validNUID(info.NUID):
		return nil, fmt.Errorf("%w: the meta of %s has the NUID %s", ErrMetaMismatch, clip(name), clip(info.NUID))
	}
	return info, nil
}

// clip quotes a value read from the stream for an error message, cut to
// 64 bytes.
func clip(v string) string {
	if len(v) > 64 {
		return strconv.Quote(v[:64]) + "..."
	}
	return strconv.Quote(v)
}
