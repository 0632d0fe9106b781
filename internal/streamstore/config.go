package streamstore

import (
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// Base is the part of a store's configuration that kv and objstore map to
// the stream the same way.
type Base struct {
	Name        string
	Description string
	TTL         time.Duration
	MaxBytes    int64
	Storage     jsapi.StorageType
	Replicas    int
	Placement   *jsapi.Placement
	Compression bool
	Metadata    map[string]string
}

// StreamConfig checks b (a valid name, no negative limit) and maps it to
// the stream of kind k: the name, description, age, size (0: unlimited),
// storage, replicas (0: 1), placement, S2 compression and metadata, with
// discard-new, rollups and direct gets allowed.
func (k *Kind) StreamConfig(b Base) (jsapi.StreamConfig, error) {
	if err := k.CheckName(b.Name); err != nil {
		return jsapi.StreamConfig{}, err
	}
	if b.TTL < 0 || b.MaxBytes < -1 || b.Replicas < 0 {
		return jsapi.StreamConfig{}, fmt.Errorf("%w: negative limit", conn.ErrInvalidOption)
	}
	sc := jsapi.StreamConfig{
		Name:        k.Prefix + b.Name,
		Description: b.Description,
		MaxAge:      b.TTL,
		MaxBytes:    Unlimited(b.MaxBytes),
		Storage:     b.Storage,
		Replicas:    max(b.Replicas, 1),
		Placement:   b.Placement,
		Discard:     jsapi.DiscardNew,
		AllowRollup: true,
		AllowDirect: true,
		Metadata:    b.Metadata,
	}
	if b.Compression {
		sc.Compression = jsapi.CompressionS2
	}
	return sc, nil
}

// Unlimited is n, or -1 (no limit) when n is 0.
func Unlimited[T int32 | int64](n T) T {
	if n == 0 {
		return -1
	}
	return n
}

// Compressed reports whether c stores its data compressed.
func Compressed(c *jsapi.StreamConfig) bool {
	return c.Compression != "" && c.Compression != jsapi.CompressionNone
}
