package objstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/deadline"

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

// ValidateStoreName reports whether name is a valid store name, and
// ErrInvalidStoreName otherwise.
func ValidateStoreName(name string) error {
	if name == "" {
		return ErrInvalidStoreName
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return ErrInvalidStoreName
		}
	}
	return nil
}

func streamConfig(cfg Config) (jsapi.StreamConfig, error) {
	if err := ValidateStoreName(cfg.Bucket); err != nil {
		return jsapi.StreamConfig{}, err
	}
	if cfg.TTL < 0 || cfg.MaxBytes < -1 || cfg.Replicas < 0 {
		return jsapi.StreamConfig{}, fmt.Errorf("%w: negative limit", conn.ErrInvalidOption)
	}
	replicas := cfg.Replicas
	if replicas == 0 {
		replicas = 1
	}
	maxBytes := cfg.MaxBytes
	if maxBytes == 0 {
		maxBytes = -1
	}
	sc := jsapi.StreamConfig{
		Name:        streamPrefix + cfg.Bucket,
		Description: cfg.Description,
		Subjects:    []string{"$O." + cfg.Bucket + ".C.>", "$O." + cfg.Bucket + ".M.>"},
		MaxAge:      cfg.TTL,
		MaxBytes:    maxBytes,
		Storage:     cfg.Storage,
		Replicas:    replicas,
		Placement:   cfg.Placement,
		Discard:     jsapi.DiscardNew,
		AllowRollup: true,
		AllowDirect: true,
		Metadata:    cfg.Metadata,
	}
	if cfg.Compression {
		sc.Compression = jsapi.CompressionS2
	}
	return sc, nil
}

// CreateStore creates an object store. Creating one that exists with the
// same configuration returns it; with a different one it fails with
// ErrBucketExists.
func CreateStore(ctx context.Context, js *jsapi.JS, cfg Config) (*Store, error) {
	sc, err := streamConfig(cfg)
	if err != nil {
		return nil, err
	}
	st, err := js.CreateStream(ctx, sc)
	if err != nil {
		if errors.Is(err, jsapi.ErrStreamNameInUse) {
			err = wrap(ErrBucketExists, err)
		}
		return nil, err
	}
	return newStore(js, cfg.Bucket, st), nil
}

// UpdateStore changes the configuration of an existing store; it fails
// with ErrBucketNotFound when there is none.
func UpdateStore(ctx context.Context, js *jsapi.JS, cfg Config) (*Store, error) {
	sc, err := streamConfig(cfg)
	if err != nil {
		return nil, err
	}
	st, err := js.UpdateStream(ctx, sc)
	if err != nil {
		if errors.Is(err, jsapi.ErrStreamNotFound) {
			err = wrap(ErrBucketNotFound, err)
		}
		return nil, err
	}
	return newStore(js, cfg.Bucket, st), nil
}

// CreateOrUpdateStore makes the store exist with cfg.
func CreateOrUpdateStore(ctx context.Context, js *jsapi.JS, cfg Config) (*Store, error) {
	sc, err := streamConfig(cfg)
	if err != nil {
		return nil, err
	}
	st, err := js.CreateOrUpdateStream(ctx, sc)
	if err != nil {
		return nil, err
	}
	return newStore(js, cfg.Bucket, st), nil
}

// Bind returns a handle on an existing store, or ErrBucketNotFound.
func Bind(ctx context.Context, js *jsapi.JS, bucket string) (*Store, error) {
	if err := ValidateStoreName(bucket); err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, streamPrefix+bucket)
	if err != nil {
		if errors.Is(err, jsapi.ErrStreamNotFound) {
			err = wrap(ErrBucketNotFound, err)
		}
		return nil, err
	}
	return newStore(js, bucket, st), nil
}

// DeleteStore deletes a store with all its objects.
func DeleteStore(ctx context.Context, js *jsapi.JS, bucket string) error {
	if err := ValidateStoreName(bucket); err != nil {
		return err
	}
	if err := js.DeleteStream(ctx, streamPrefix+bucket); err != nil {
		if errors.Is(err, jsapi.ErrStreamNotFound) {
			err = wrap(ErrBucketNotFound, err)
		}
		return err
	}
	return nil
}

// StoreNames yields the names of the account's object stores. A failure
// is yielded as a final ("", err).
func StoreNames(ctx context.Context, js *jsapi.JS) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for name, err := range js.StreamNames(ctx, "$O.*.C.>") {
			if err != nil {
				yield("", err)
				return
			}
			if b, ok := strings.CutPrefix(name, streamPrefix); ok {
				if !yield(b, nil) {
					return
				}
			}
		}
	}
}

// Stores yields the status of the account's object stores.
func Stores(ctx context.Context, js *jsapi.JS) iter.Seq2[*Status, error] {
	return func(yield func(*Status, error) bool) {
		for info, err := range js.Streams(ctx, "$O.*.C.>") {
			if err != nil {
				yield(nil, err)
				return
			}
			if b, ok := strings.CutPrefix(info.Config.Name, streamPrefix); ok {
				if !yield(newStatus(b, info), nil) {
					return
				}
			}
		}
	}
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
		Compressed:  c.Compression != "" && c.Compression != jsapi.CompressionNone,
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

func (s *Store) streamErr(err error) error {
	if err != nil && errors.Is(err, jsapi.ErrStreamNotFound) {
		return wrap(ErrBucketNotFound, err)
	}
	return deadline.Err(err) // a passed deadline also matches conn.ErrTimeout
}
