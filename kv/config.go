package kv

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/streamstore"
	"github.com/natsio/natsio/jsapi"
)

// Stream and subject layout of a bucket (ADR-8).
const (
	streamPrefix  = "KV_"
	subjectPrefix = "$KV."
	opHeader      = "KV-Operation"
	opDel         = "DEL"
	opPurge       = "PURGE"
	opPut         = "PUT" // not written by this client; accepted on read
)

// Config is a bucket's configuration. Zero fields take the defaults noted;
// the stream it maps to is the one nats.go creates for the same
// configuration, so either client can create, bind or update the bucket.
type Config struct {
	// Bucket names the bucket: a-z, A-Z, 0-9, '_' and '-'. The stream is
	// KV_<Bucket>.
	Bucket      string
	Description string
	// MaxValueSize bounds a value in bytes (0: unlimited).
	MaxValueSize int32
	// History is how many revisions are kept per key (0: 1, at most 64).
	History uint8
	// TTL expires every revision this long after it was written (0:
	// never).
	TTL time.Duration
	// MaxBytes bounds the bucket's size (0: unlimited). Writes beyond it
	// are refused.
	MaxBytes int64
	// Storage is file (default) or memory.
	Storage jsapi.StorageType
	// Replicas in a cluster (0: 1).
	Replicas  int
	Placement *jsapi.Placement
	// RePublish republishes every stored entry, e.g. to "$KV.b.>"
	// subscribers that do not use a watch.
	RePublish *jsapi.RePublish
	// Mirror makes the bucket a read replica of another bucket (its Name
	// may be the bucket or the stream name). Writes go to the origin.
	Mirror *jsapi.StreamSource
	// Sources aggregate other buckets into this one; a source without
	// subject transforms is taken to be a bucket and mapped to this
	// bucket's keys.
	Sources []jsapi.StreamSource
	// Compression stores the bucket S2-compressed on disk.
	Compression bool
	// LimitMarkerTTL (≥ 1 s, server 2.11+) enables per-key TTLs (Create
	// with KeyTTL, Purge with PurgeTTL) and leaves a marker, kept this
	// long, when a key expires so watchers learn about it.
	LimitMarkerTTL time.Duration
	// Metadata is free-form.
	Metadata map[string]string
}

// kind is the bucket's stream: KV_<bucket> on $KV.<bucket>.>.
var kind = &streamstore.Kind{
	Prefix:      streamPrefix,
	List:        subjectPrefix + "*.>",
	InvalidName: ErrInvalidBucketName,
	NotFound:    ErrBucketNotFound,
	Exists:      ErrBucketExists,
}

// streamConfig maps cfg to its stream configuration.
func streamConfig(ctx context.Context, js *jsapi.JS, cfg Config) (jsapi.StreamConfig, error) {
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
	if err != nil {
		return sc, err
	}
	if cfg.History > MaxHistory {
		return jsapi.StreamConfig{}, ErrHistoryTooLarge
	}
	if cfg.MaxValueSize < -1 {
		return jsapi.StreamConfig{}, fmt.Errorf("%w: negative limit", conn.ErrInvalidOption)
	}
	sc.MaxMsgsPerSubject = int64(max(cfg.History, 1))
	sc.MaxMsgSize = streamstore.Unlimited(cfg.MaxValueSize)
	sc.DenyDelete = true
	// The duplicate window is 2 minutes, or the TTL when shorter.
	sc.DuplicateWindow = 2 * time.Minute
	if cfg.TTL > 0 && cfg.TTL < sc.DuplicateWindow {
		sc.DuplicateWindow = cfg.TTL
	}
	sc.MaxMsgs, sc.MaxConsumers = -1, -1
	sc.RePublish = cfg.RePublish
	if cfg.LimitMarkerTTL != 0 {
		if cfg.LimitMarkerTTL < time.Second {
			return jsapi.StreamConfig{}, fmt.Errorf("%w: LimitMarkerTTL %v is below one second", conn.ErrInvalidOption, cfg.LimitMarkerTTL)
		}
		if err := js.Check(ctx, jsapi.FeatureMsgTTL); err != nil {
			if errors.Is(err, jsapi.ErrServerTooOld) {
				return jsapi.StreamConfig{}, fmt.Errorf("%w: %w", ErrLimitMarkerTTLNotSupported, err)
			}
			return jsapi.StreamConfig{}, err
		}
		sc.AllowMsgTTL = true
		sc.SubjectDeleteMarkerTTL = cfg.LimitMarkerTTL
	}
	if cfg.Mirror != nil {
		m := *cfg.Mirror
		if !strings.HasPrefix(m.Name, streamPrefix) {
			m.Name = streamPrefix + m.Name
		}
		sc.Mirror = &m
		sc.MirrorDirect = true
		return sc, nil
	}
	for _, src := range cfg.Sources {
		if len(src.SubjectTransforms) == 0 {
			origin := strings.TrimPrefix(src.Name, streamPrefix)
			src.Name = streamPrefix + origin
			if src.External == nil || origin != cfg.Bucket {
				src.SubjectTransforms = []jsapi.SubjectTransformConfig{{
					Source:      subjectPrefix + origin + ".>",
					Destination: subjectPrefix + cfg.Bucket + ".>",
				}}
			}
		}
		sc.Sources = append(sc.Sources, src)
	}
	sc.Subjects = []string{subjectPrefix + cfg.Bucket + ".>"}
	return sc, nil
}

// CreateBucket creates a bucket. Creating a bucket that exists with the
// same configuration returns it; with a different one it fails with
// ErrBucketExists.
func CreateBucket(ctx context.Context, js *jsapi.JS, cfg Config) (*Bucket, error) {
	return makeBucket(ctx, js, cfg, kind.Create)
}

// UpdateBucket changes the configuration of an existing bucket; it fails
// with ErrBucketNotFound when there is none.
func UpdateBucket(ctx context.Context, js *jsapi.JS, cfg Config) (*Bucket, error) {
	return makeBucket(ctx, js, cfg, kind.Update)
}

// CreateOrUpdateBucket makes the bucket exist with cfg.
func CreateOrUpdateBucket(ctx context.Context, js *jsapi.JS, cfg Config) (*Bucket, error) {
	return makeBucket(ctx, js, cfg, kind.CreateOrUpdate)
}

func makeBucket(ctx context.Context, js *jsapi.JS, cfg Config, op streamstore.Op) (*Bucket, error) {
	sc, err := streamConfig(ctx, js, cfg)
	return streamstore.Open(ctx, js, op, sc, err, func(st *jsapi.Stream) *Bucket { return newBucket(js, st) })
}

// Bind returns a handle on an existing bucket. It fails with
// ErrBucketNotFound when there is none and with ErrBadBucket when the
// stream does not look like a bucket.
func Bind(ctx context.Context, js *jsapi.JS, bucket string) (*Bucket, error) {
	st, err := kind.Bind(ctx, js, bucket)
	if err != nil {
		return nil, err
	}
	if st.CachedInfo().Config.MaxMsgsPerSubject < 1 {
		return nil, ErrBadBucket
	}
	return newBucket(js, st), nil
}

// DeleteBucket deletes a bucket with all its keys and history.
func DeleteBucket(ctx context.Context, js *jsapi.JS, bucket string) error {
	return kind.Delete(ctx, js, bucket)
}

// BucketNames yields the names of the account's buckets (streams KV_* on
// $KV.*.>; mirrors, which have no subjects, are not listed). A failure is
// yielded as a final ("", err).
func BucketNames(ctx context.Context, js *jsapi.JS) iter.Seq2[string, error] {
	return kind.Names(ctx, js)
}

// Buckets yields the status of the account's buckets, like BucketNames.
func Buckets(ctx context.Context, js *jsapi.JS) iter.Seq2[*Status, error] {
	return streamstore.Statuses(ctx, js, kind, newStatus)
}

// Status is a bucket's configuration and state.
type Status struct {
	Bucket string
	// Values counts the stored entries, history and markers included.
	Values uint64
	// History is the number of revisions kept per key.
	History int64
	TTL     time.Duration
	// Bytes is the size of the bucket's stream.
	Bytes          uint64
	Compressed     bool
	LimitMarkerTTL time.Duration
	Config         Config
	// StreamInfo is the information of the stream behind the bucket.
	StreamInfo *jsapi.StreamInfo
}

func newStatus(bucket string, info *jsapi.StreamInfo) *Status {
	c := &info.Config
	cfg := Config{
		Bucket:         bucket,
		Description:    c.Description,
		MaxValueSize:   c.MaxMsgSize,
		History:        uint8(c.MaxMsgsPerSubject),
		TTL:            c.MaxAge,
		MaxBytes:       c.MaxBytes,
		Storage:        c.Storage,
		Replicas:       c.Replicas,
		Placement:      c.Placement,
		RePublish:      c.RePublish,
		Mirror:         c.Mirror,
		Sources:        c.Sources,
		Compression:    streamstore.Compressed(c),
		LimitMarkerTTL: c.SubjectDeleteMarkerTTL,
		Metadata:       c.Metadata,
	}
	return &Status{
		Bucket:         bucket,
		Values:         info.State.Msgs,
		History:        c.MaxMsgsPerSubject,
		TTL:            c.MaxAge,
		Bytes:          info.State.Bytes,
		Compressed:     cfg.Compression,
		LimitMarkerTTL: c.SubjectDeleteMarkerTTL,
		Config:         cfg,
		StreamInfo:     info,
	}
}
