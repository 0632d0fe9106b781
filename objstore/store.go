package objstore

import (
	"context"
	"iter"
	"time"

	"github.com/natsio/natsio/internal/streamstore"

	"github.com/natsio/natsio/jsapi"
)

// Stream and subject layout of a store (ADR-20).
const (
	streamPrefix = "OBJ_"
	// DefaultChunkSize is the size of the chunks an object is stored in
	// when its Meta names none.
	DefaultChunkSize = 128 * 1024
)

// Config is a store's configuration. The stream it maps to is the one
// nats.go creates for the same configuration.
type Config struct {
	// Bucket names the store: a-z, A-Z, 0-9, '_' and '-'. The stream is
	// OBJ_<Bucket>.
	Bucket      string
	Description string
	// TTL removes objects' data and meta this long after they were
	// written (0: never).
	TTL time.Duration
	// MaxBytes bounds the store's size (0: unlimited); a Put beyond it
	// fails and leaves nothing behind.
	MaxBytes int64
	// Storage is file (default) or memory.
	Storage jsapi.StorageType
	// Replicas in a cluster (0: 1).
	Replicas  int
	Placement *jsapi.Placement
	// Compression stores the data S2-compressed on disk.
	Compression bool
	Metadata    map[string]string
}

// kind is the store's stream: OBJ_<store> on $O.<store>.C.> and
// $O.<store>.M.>.
var kind = &streamstore.Kind{
	Prefix:      streamPrefix,
	List:        "$O.*.C.>",
	InvalidName: ErrInvalidStoreName,
	NotFound:    ErrBucketNotFound,
	Exists:      ErrBucketExists,
}

// ValidateStoreName reports whether name is a valid store name, and
// ErrInvalidStoreName otherwise.
func ValidateStoreName(name string) error { return kind.CheckName(name) }

func streamConfig(cfg Config) (jsapi.StreamConfig, error) {
	sc, err := kind.StreamConfig(streamstore.Base{
		Name:        cfg.Bucket,
		Description: cfg.Description,
		TTL:         cfg.TTL,
		MaxBytes:    cfg.MaxBytes,
		Storage:     cfg.Storage,
		Replicas:    cfg.Replicas,
		Placement:   cfg.Placement,
		Compression: cfg.Compression,
		Metadata:    cfg.Metadata,
	})
	sc.Subjects = []string{"$O." + cfg.Bucket + ".C.>", "$O." + cfg.Bucket + ".M.>"}
	return sc, err
}

// CreateStore creates an object store. Creating one that exists with the
// same configuration returns it; with a different one it fails with
// ErrBucketExists.
func CreateStore(ctx context.Context, js *jsapi.JS, cfg Config) (*Store, error) {
	return makeStore(ctx, js, cfg, kind.Create)
}

// UpdateStore changes the configuration of an existing store; it fails
// with ErrBucketNotFound when there is none.
func UpdateStore(ctx context.Context, js *jsapi.JS, cfg Config) (*Store, error) {
	return makeStore(ctx, js, cfg, kind.Update)
}

// CreateOrUpdateStore makes the store exist with cfg.
func CreateOrUpdateStore(ctx context.Context, js *jsapi.JS, cfg Config) (*Store, error) {
	return makeStore(ctx, js, cfg, kind.CreateOrUpdate)
}

func makeStore(ctx context.Context, js *jsapi.JS, cfg Config, op streamstore.Op) (*Store, error) {
	sc, err := streamConfig(cfg)
	return streamstore.Open(ctx, js, op, sc, err, func(st *jsapi.Stream) *Store { return newStore(js, cfg.Bucket, st) })
}

// Bind returns a handle on an existing store, or ErrBucketNotFound.
func Bind(ctx context.Context, js *jsapi.JS, bucket string) (*Store, error) {
	st, err := kind.Bind(ctx, js, bucket)
	if err != nil {
		return nil, err
	}
	return newStore(js, bucket, st), nil
}

// DeleteStore deletes a store with all its objects.
func DeleteStore(ctx context.Context, js *jsapi.JS, bucket string) error {
	return kind.Delete(ctx, js, bucket)
}

// StoreNames yields the names of the account's object stores. A failure
// is yielded as a final ("", err).
func StoreNames(ctx context.Context, js *jsapi.JS) iter.Seq2[string, error] {
	return kind.Names(ctx, js)
}

// Stores yields the status of the account's object stores.
func Stores(ctx context.Context, js *jsapi.JS) iter.Seq2[*Status, error] {
	return streamstore.Statuses(ctx, js, kind, newStatus)
}

// Status is a store's configuration and state.
type Status struct {
	Bucket      string
	Description string
	TTL         time.Duration
	Storage     jsapi.StorageType
	Replicas    int
	// Sealed stores refuse every change.
	Sealed bool
	// Size is the stream's size: data and meta of all objects.
	Size       uint64
	Compressed bool
	Metadata   map[string]string
	StreamInfo *jsapi.StreamInfo
}

func newStatus(bucket string, info *jsapi.StreamInfo) *Status {
	c := &info.Config
	return &Status{
		Bucket:      bucket,
		Description: c.Description,
		TTL:         c.MaxAge,
		Storage:     c.Storage,
		Replicas:    c.Replicas,
		Sealed:      c.Sealed,
		Size:        info.State.Bytes,
		Compressed:  streamstore.Compressed(c),
		Metadata:    c.Metadata,
		StreamInfo:  info,
	}
}

// Store is a handle on an object store. It is safe for concurrent use.
type Store struct {
	js       *jsapi.JS
	name     string
	stream   *jsapi.Stream
	chunkPre string // "$O.<bucket>.C."
	metaPre  string // "$O.<bucket>.M."
}

func newStore(js *jsapi.JS, bucket string, st *jsapi.Stream) *Store {
	return &Store{js: js, name: bucket, stream: st, chunkPre: "$O." + bucket + ".C.", metaPre: "$O." + bucket + ".M."}
}

// Name returns the store's name.
func (s *Store) Name() string { return s.name }

// Status fetches the store's configuration and state.
func (s *Store) Status(ctx context.Context) (*Status, error) {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return nil, s.streamErr(err)
	}
	return newStatus(s.name, info), nil
}

// Seal makes the store read-only, for good.
func (s *Store) Seal(ctx context.Context) error {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return s.streamErr(err)
	}
	cfg := info.Config
	cfg.Sealed = true
	_, err = s.js.UpdateStream(ctx, cfg)
	return s.streamErr(err)
}

func (s *Store) streamErr(err error) error { return kind.Err(err) }
