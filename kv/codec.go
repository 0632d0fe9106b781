package kv

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Key codecs let a bucket hold keys that NATS subjects cannot carry (spaces,
// '@', unicode, paths with '/'): the application uses its own keys and a
// CodecBucket stores them encoded. The encodings are those of orbit.go's
// kvcodec, so buckets written through either can be read through the other.

// KeyCodec turns an application's key into the key stored in the bucket
// and back. EncodeKey must give a valid key (ValidateKey) for every key
// the application uses; DecodeKey undoes it.
type KeyCodec interface {
	EncodeKey(key string) (string, error)
	DecodeKey(stored string) (string, error)
}

// FilterCodec is a KeyCodec that also encodes watch and key filters,
// keeping their "*" and ">" wildcard tokens.
type FilterCodec interface {
	KeyCodec
	EncodeFilter(filter string) (string, error)
}

// ValueCodec turns a value into the bytes stored and back. DecodeValue
// must return memory it owns or the caller's: it may return its argument.
type ValueCodec interface {
	EncodeValue(value []byte) ([]byte, error)
	DecodeValue(stored []byte) ([]byte, error)
}

// Codec is a codec of keys, filters and values.
type Codec interface {
	FilterCodec
	ValueCodec
}

// Errors of the codecs, matched with errors.Is; the codec's own error is
// wrapped too.
var (
	// ErrNoCodecs: a chain of no codecs.
	ErrNoCodecs = errors.New("kv: a codec chain needs at least one codec")
	// ErrWildcardNotSupported: a filter with "*" or ">" given to a key
	// codec that cannot encode filters.
	ErrWildcardNotSupported = errors.New("kv: the key codec does not support wildcard filters")
	// ErrKeyEncodeFailed, ErrKeyDecodeFailed, ErrValueEncodeFailed,
	// ErrValueDecodeFailed, ErrFilterEncodeFailed: a codec failed.
	ErrKeyEncodeFailed    = errors.New("kv: failed to encode key")
	ErrKeyDecodeFailed    = errors.New("kv: failed to decode key")
	ErrValueEncodeFailed  = errors.New("kv: failed to encode value")
	ErrValueDecodeFailed  = errors.New("kv: failed to decode value")
	ErrFilterEncodeFailed = errors.New("kv: failed to encode filter")
)

// wildcard reports whether token is a filter wildcard.
func wildcard(token string) bool { return token == "*" || token == ">" }

// base64Codec encodes each '.'-separated token of a key with unpadded
// URL-safe base64 (RFC 4648 §5), and values whole the same way.
type base64Codec struct{}

// Base64Codec returns the codec that stores each token of a key (the parts
// between dots) in unpadded URL-safe base64, so any text can be a token,
// and values in the same encoding (a third larger). Filters keep their
// "*" and ">" tokens. It is orbit.go kvcodec's Base64Codec.
func Base64Codec() Codec { return base64Codec{} }

func (base64Codec) EncodeKey(key string) (string, error) { return base64Tokens(key, false), nil }

func (base64Codec) EncodeFilter(filter string) (string, error) {
	return base64Tokens(filter, true), nil
}

func base64Tokens(s string, filter bool) string {
	tokens := strings.Split(s, ".")
	for i, t := range tokens {
		if !filter || !wildcard(t) {
			tokens[i] = base64.RawURLEncoding.EncodeToString([]byte(t))
		}
	}
	return strings.Join(tokens, ".")
}

func (base64Codec) DecodeKey(stored string) (string, error) {
	tokens := strings.Split(stored, ".")
	for i, t := range tokens {
		b, err := base64.RawURLEncoding.DecodeString(t)
		if err != nil {
			return "", fmt.Errorf("base64 token %d: %w", i, err)
		}
		tokens[i] = string(b)
	}
	return strings.Join(tokens, "."), nil
}

func (base64Codec) EncodeValue(value []byte) ([]byte, error) {
	out := make([]byte, base64.RawURLEncoding.EncodedLen(len(value)))
	base64.RawURLEncoding.Encode(out, value)
	return out, nil
}

func (base64Codec) DecodeValue(stored []byte) ([]byte, error) {
	out := make([]byte, base64.RawURLEncoding.DecodedLen(len(stored)))
	n, err := base64.RawURLEncoding.Decode(out, stored)
	if err != nil {
		return nil, fmt.Errorf("base64 value: %w", err)
	}
	return out[:n], nil
}

// pathRoot stands for a path's leading '/'.
const pathRoot = "_root_"

// pathCodec stores '/'-separated paths as '.'-separated keys.
type pathCodec struct{}

// PathCodec returns the codec that stores file-system-like paths:
// "a/b/c" as "a.b.c", a leading '/' as the token "_root_" ("/a/b" is
// "_root_.a.b", "/" is "_root_"), a trailing '/' dropped. Filters are
// encoded as keys, so "a/*" watches "a.*". Values are stored as they are.
// A '.' inside a path element is a token separator like '/': it reads
// back as '/' ("a/b.txt" returns as "a/b/txt").
// It is orbit.go kvcodec's PathCodec; chain it after Base64Codec's tokens
// when path elements hold other characters (ChainKeyCodecs(PathCodec(),
// Base64Codec())).
func PathCodec() Codec { return pathCodec{} }

func (pathCodec) EncodeKey(key string) (string, error) {
	if strings.HasPrefix(key, "/") {
		if key == "/" {
			return pathRoot, nil
		}
		key = pathRoot + "." + key[1:]
	}
	key = strings.TrimSuffix(key, "/")
	return strings.ReplaceAll(key, "/", "."), nil
}

func (p pathCodec) EncodeFilter(filter string) (string, error) { return p.EncodeKey(filter) }

func (pathCodec) DecodeKey(stored string) (string, error) {
	switch {
	case stored == pathRoot:
		return "/", nil
	case strings.HasPrefix(stored, pathRoot+"."):
		return "/" + strings.ReplaceAll(stored[len(pathRoot)+1:], ".", "/"), nil
	}
	return strings.ReplaceAll(stored, ".", "/"), nil
}

func (pathCodec) EncodeValue(value []byte) ([]byte, error)  { return value, nil }
func (pathCodec) DecodeValue(stored []byte) ([]byte, error) { return stored, nil }

// noOpCodec changes nothing.
type noOpCodec struct{}

// NoOpCodec returns the codec that changes nothing: keys, filters and
// values are stored as given.
func NoOpCodec() Codec { return noOpCodec{} }

func (noOpCodec) EncodeKey(key string) (string, error)       { return key, nil }
func (noOpCodec) DecodeKey(stored string) (string, error)    { return stored, nil }
func (noOpCodec) EncodeFilter(filter string) (string, error) { return filter, nil }
func (noOpCodec) EncodeValue(value []byte) ([]byte, error)   { return value, nil }
func (noOpCodec) DecodeValue(stored []byte) ([]byte, error)  { return stored, nil }

// keyChain applies key codecs in order, and decodes in reverse.
type keyChain []KeyCodec

// ChainKeyCodecs returns a key codec that encodes with each codec in turn
// (the first sees the application's key) and decodes in reverse order, as
// orbit.go kvcodec's NewKeyChainCodec. Its EncodeFilter fails with
// ErrWildcardNotSupported unless every codec is a FilterCodec. It fails
// with ErrNoCodecs for no codec.
func ChainKeyCodecs(codecs ...KeyCodec) (FilterCodec, error) {
	if len(codecs) == 0 {
		return nil, ErrNoCodecs
	}
	return keyChain(append([]KeyCodec(nil), codecs...)), nil
}

func (c keyChain) EncodeKey(key string) (string, error) {
	for i, k := range c {
		var err error
		if key, err = k.EncodeKey(key); err != nil {
			return "", fmt.Errorf("%w (codec %d): %w", ErrKeyEncodeFailed, i, err)
		}
	}
	return key, nil
}

func (c keyChain) DecodeKey(stored string) (string, error) {
	for i := len(c) - 1; i >= 0; i-- {
		var err error
		if stored, err = c[i].DecodeKey(stored); err != nil {
			return "", fmt.Errorf("%w (codec %d): %w", ErrKeyDecodeFailed, i, err)
		}
	}
	return stored, nil
}

func (c keyChain) EncodeFilter(filter string) (string, error) {
	for i, k := range c {
		if _, ok := k.(FilterCodec); !ok {
			return "", fmt.Errorf("%w: codec %d encodes no filter", ErrWildcardNotSupported, i)
		}
	}
	for i, k := range c {
		var err error
		if filter, err = k.(FilterCodec).EncodeFilter(filter); err != nil {
			return "", fmt.Errorf("%w (codec %d): %w", ErrFilterEncodeFailed, i, err)
		}
	}
	return filter, nil
}

// valueChain applies value codecs in order, and decodes in reverse.
type valueChain []ValueCodec

// ChainValueCodecs returns a value codec that encodes with each codec in
// turn and decodes in reverse order, as orbit.go kvcodec's
// NewValueChainCodec. It fails with ErrNoCodecs for no codec.
func ChainValueCodecs(codecs ...ValueCodec) (ValueCodec, error) {
	if len(codecs) == 0 {
		return nil, ErrNoCodecs
	}
	return valueChain(append([]ValueCodec(nil), codecs...)), nil
}

func (c valueChain) EncodeValue(value []byte) ([]byte, error) {
	for i, v := range c {
		var err error
		if value, err = v.EncodeValue(value); err != nil {
			return nil, fmt.Errorf("%w (codec %d): %w", ErrValueEncodeFailed, i, err)
		}
	}
	return value, nil
}

func (c valueChain) DecodeValue(stored []byte) ([]byte, error) {
	for i := len(c) - 1; i >= 0; i-- {
		var err error
		if stored, err = c[i].DecodeValue(stored); err != nil {
			return nil, fmt.Errorf("%w (codec %d): %w", ErrValueDecodeFailed, i, err)
		}
	}
	return stored, nil
}
