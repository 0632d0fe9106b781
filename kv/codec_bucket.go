package kv

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync/atomic"
)

// CodecBucket is a Bucket seen through a key codec and a value codec: the
// application's keys and values go in and come out, the encoded ones are
// stored. It is safe for concurrent use, like its Bucket, and holds no
// resource of its own. Buckets written through orbit.go's kvcodec with the
// same codecs read the same.
//
// An entry a watch, ListKeys, Keys or History finds that the codecs cannot
// decode (one written without them, say) is given as it is stored, with
// its stored key and value, and counted by UndecodedEntries: nothing is
// dropped. Get and GetRevision of such an entry fail with
// ErrKeyDecodeFailed or ErrValueDecodeFailed instead.
type CodecBucket struct {
	b         *Bucket
	keys      KeyCodec
	values    ValueCodec
	undecoded atomic.Uint64
}

// WithCodecs returns b seen through keys and values; a nil codec is
// NoOpCodec.
func WithCodecs(b *Bucket, keys KeyCodec, values ValueCodec) *CodecBucket {
	if keys == nil {
		keys = NoOpCodec()
	}
	if values == nil {
		values = NoOpCodec()
	}
	return &CodecBucket{b: b, keys: keys, values: values}
}

// Bucket returns the bucket underneath, which reads and writes stored keys
// and values.
func (c *CodecBucket) Bucket() *Bucket { return c.b }

// Name returns the bucket's name.
func (c *CodecBucket) Name() string { return c.b.Name() }

// UndecodedEntries counts the entries given as stored because the codecs
// could not decode them.
func (c *CodecBucket) UndecodedEntries() uint64 { return c.undecoded.Load() }

func (c *CodecBucket) encodeKey(key string) (string, error) {
	k, err := c.keys.EncodeKey(key)
	if err != nil {
		if errors.Is(err, ErrKeyEncodeFailed) {
			return "", err
		}
		return "", fmt.Errorf("%w: %w", ErrKeyEncodeFailed, err)
	}
	return k, nil
}

func (c *CodecBucket) encodeValue(value []byte) ([]byte, error) {
	v, err := c.values.EncodeValue(value)
	if err != nil {
		if errors.Is(err, ErrValueEncodeFailed) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrValueEncodeFailed, err)
	}
	return v, nil
}

// encode encodes a key and its value.
func (c *CodecBucket) encode(key string, value []byte) (string, []byte, error) {
	k, err := c.encodeKey(key)
	if err != nil {
		return "", nil, err
	}
	v, err := c.encodeValue(value)
	return k, v, err
}

// encodeFilter encodes a watch or key filter: with EncodeFilter when the
// key codec has one, else as a key when it has no wildcard.
func (c *CodecBucket) encodeFilter(filter string) (string, error) {
	if fc, ok := c.keys.(FilterCodec); ok {
		f, err := fc.EncodeFilter(filter)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, ErrWildcardNotSupported) {
			if errors.Is(err, ErrFilterEncodeFailed) {
				return "", err
			}
			return "", fmt.Errorf("%w: %w", ErrFilterEncodeFailed, err)
		}
	}
	for _, t := range strings.Split(filter, ".") {
		if wildcard(t) {
			return "", fmt.Errorf("%w: %q", ErrWildcardNotSupported, filter)
		}
	}
	return c.encodeKey(filter)
}

func (c *CodecBucket) encodeFilters(filters []string) ([]string, error) {
	out := make([]string, len(filters))
	for i, f := range filters {
		var err error
		if out[i], err = c.encodeFilter(f); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decoded returns e with its key and value decoded, or as stored (and
// counted) when they cannot be; strict makes that an error instead.
func (c *CodecBucket) decoded(e *Entry, strict bool) (*Entry, error) {
	key, err := c.keys.DecodeKey(e.Key)
	if err != nil {
		if strict {
			return nil, fmt.Errorf("%w: stored key %q: %w", ErrKeyDecodeFailed, e.Key, err)
		}
		c.undecoded.Add(1)
		return e, nil
	}
	value := e.Value
	if len(e.Value) > 0 {
		if value, err = c.values.DecodeValue(e.Value); err != nil {
			if strict {
				return nil, fmt.Errorf("%w: key %q: %w", ErrValueDecodeFailed, key, err)
			}
			c.undecoded.Add(1)
			return e, nil
		}
	}
	e.Key, e.Value = key, value
	return e, nil
}

// Put stores value under key (both encoded); see Bucket.Put.
func (c *CodecBucket) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	k, v, err := c.encode(key, value)
	if err != nil {
		return 0, err
	}
	return c.b.Put(ctx, k, v)
}

// PutString is Put with a string value.
func (c *CodecBucket) PutString(ctx context.Context, key, value string) (uint64, error) {
	return c.Put(ctx, key, []byte(value))
}

// Create stores value under key only if it has no value; see Bucket.Create.
func (c *CodecBucket) Create(ctx context.Context, key string, value []byte, opts ...CreateOpt) (uint64, error) {
	k, v, err := c.encode(key, value)
	if err != nil {
		return 0, err
	}
	return c.b.Create(ctx, k, v, opts...)
}

// Update stores value under key if its latest revision is revision; see
// Bucket.Update.
func (c *CodecBucket) Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error) {
	k, v, err := c.encode(key, value)
	if err != nil {
		return 0, err
	}
	return c.b.Update(ctx, k, v, revision)
}

// Get returns key's latest entry, decoded; see Bucket.Get. An entry the
// codecs cannot decode is ErrKeyDecodeFailed or ErrValueDecodeFailed.
func (c *CodecBucket) Get(ctx context.Context, key string) (*Entry, error) {
	k, err := c.encodeKey(key)
	if err != nil {
		return nil, err
	}
	e, err := c.b.Get(ctx, k)
	if err != nil {
		return nil, err
	}
	return c.decoded(e, true)
}

// GetRevision returns key's entry at revision, decoded; see
// Bucket.GetRevision.
func (c *CodecBucket) GetRevision(ctx context.Context, key string, revision uint64) (*Entry, error) {
	k, err := c.encodeKey(key)
	if err != nil {
		return nil, err
	}
	e, err := c.b.GetRevision(ctx, k, revision)
	if err != nil {
		return nil, err
	}
	return c.decoded(e, true)
}

// Delete marks key deleted; see Bucket.Delete.
func (c *CodecBucket) Delete(ctx context.Context, key string, opts ...DeleteOpt) error {
	k, err := c.encodeKey(key)
	if err != nil {
		return err
	}
	return c.b.Delete(ctx, k, opts...)
}

// Purge removes key's history; see Bucket.Purge.
func (c *CodecBucket) Purge(ctx context.Context, key string, opts ...PurgeOpt) error {
	k, err := c.encodeKey(key)
	if err != nil {
		return err
	}
	return c.b.Purge(ctx, k, opts...)
}

// History returns the kept revisions of the keys matching filter, decoded;
// see Bucket.History.
func (c *CodecBucket) History(ctx context.Context, filter string, opts ...WatchOpt) ([]*Entry, error) {
	f, err := c.encodeFilter(filter)
	if err != nil {
		return nil, err
	}
	es, err := c.b.History(ctx, f, opts...)
	for i, e := range es {
		es[i], _ = c.decoded(e, false)
	}
	return es, err
}

// Watch watches the keys matching filter (encoded as the key codec's
// EncodeFilter does) and yields decoded entries; see Bucket.WatchFiltered.
// A filter with wildcards needs a FilterCodec: else the watch yields
// ErrWildcardNotSupported before any I/O.
func (c *CodecBucket) Watch(ctx context.Context, filter string, opts ...WatchOpt) iter.Seq2[*Entry, error] {
	return c.WatchFiltered(ctx, []string{filter}, opts...)
}

// WatchAll watches every key; see Watch.
func (c *CodecBucket) WatchAll(ctx context.Context, opts ...WatchOpt) iter.Seq2[*Entry, error] {
	return c.WatchFiltered(ctx, nil, opts...)
}

// WatchFiltered watches the keys matching any of filters; see Watch.
func (c *CodecBucket) WatchFiltered(ctx context.Context, filters []string, opts ...WatchOpt) iter.Seq2[*Entry, error] {
	return func(yield func(*Entry, error) bool) {
		fs, err := c.encodeFilters(filters)
		if err != nil {
			yield(nil, err)
			return
		}
		for e, err := range c.b.WatchFiltered(ctx, fs, opts...) {
			if e != nil {
				e, _ = c.decoded(e, false)
			}
			if !yield(e, err) {
				return
			}
		}
	}
}

// ListKeys yields the decoded keys that have a value among those matching
// filters; see Bucket.ListKeys.
func (c *CodecBucket) ListKeys(ctx context.Context, filters ...string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		fs, err := c.encodeFilters(filters)
		if err != nil {
			yield("", err)
			return
		}
		for k, err := range c.b.ListKeys(ctx, fs...) {
			if err == nil {
				if d, derr := c.keys.DecodeKey(k); derr == nil {
					k = d
				} else {
					c.undecoded.Add(1)
				}
			}
			if !yield(k, err) {
				return
			}
		}
	}
}

// Keys returns the sorted decoded keys that have a value among those
// matching filters; see Bucket.Keys.
func (c *CodecBucket) Keys(ctx context.Context, filters ...string) ([]string, error) {
	keys := []string{}
	for k, err := range c.ListKeys(ctx, filters...) {
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, nil
}

// Status returns the bucket's status; see Bucket.Status.
func (c *CodecBucket) Status(ctx context.Context) (*Status, error) { return c.b.Status(ctx) }

// PurgeDeletes removes the delete and purge markers; see
// Bucket.PurgeDeletes.
func (c *CodecBucket) PurgeDeletes(ctx context.Context, opts ...PurgeDeletesOpt) error {
	return c.b.PurgeDeletes(ctx, opts...)
}
