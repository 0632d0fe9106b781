package kv_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/natsio/natsio/kv"
)

// TestCodecEncodings pins the stored forms, which other kvcodec users read.
func TestCodecEncodings(t *testing.T) {
	chain, err := kv.ChainKeyCodecs(kv.PathCodec(), kv.Base64Codec())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name        string
		codec       kv.KeyCodec
		key, stored string
	}{
		{"base64", kv.Base64Codec(), "user@example.com", "dXNlckBleGFtcGxl.Y29t"},
		{"base64 spaces", kv.Base64Codec(), "a b.c d", "YSBi.YyBk"},
		{"base64 unicode", kv.Base64Codec(), "ключ", "0LrQu9GO0Yc"},
		{"path", kv.PathCodec(), "a/b/c", "a.b.c"},
		{"path root", kv.PathCodec(), "/", "_root_"},
		{"path absolute", kv.PathCodec(), "/etc/hosts", "_root_.etc.hosts"},
		{"noop", kv.NoOpCodec(), "a.b", "a.b"},
		{"path then base64", chain, "/home/my docs", "X3Jvb3Rf.aG9tZQ.bXkgZG9jcw"},
	} {
		got, err := c.codec.EncodeKey(c.key)
		if err != nil || got != c.stored {
			t.Errorf("%s: EncodeKey(%q) = %q, %v; want %q", c.name, c.key, got, err, c.stored)
		}
		back, err := c.codec.DecodeKey(c.stored)
		if err != nil || back != c.key {
			t.Errorf("%s: DecodeKey(%q) = %q, %v; want %q", c.name, c.stored, back, err, c.key)
		}
		if err := kv.ValidateKey(got); err != nil {
			t.Errorf("%s: stored key %q is not a valid key: %v", c.name, got, err)
		}
	}
	// A trailing slash is dropped.
	if got, _ := kv.PathCodec().EncodeKey("a/b/"); got != "a.b" {
		t.Errorf("trailing slash: %q", got)
	}
	// Filters keep their wildcards.
	for _, c := range []struct {
		codec          kv.FilterCodec
		filter, stored string
	}{
		{kv.Base64Codec(), "users.*.name", "dXNlcnM.*.bmFtZQ"},
		{kv.Base64Codec(), "a b.>", "YSBi.>"},
		{kv.PathCodec(), "/logs/*", "_root_.logs.*"},
		{chain, "/home/>", "X3Jvb3Rf.aG9tZQ.>"},
	} {
		if got, err := c.codec.EncodeFilter(c.filter); err != nil || got != c.stored {
			t.Errorf("EncodeFilter(%q) = %q, %v; want %q", c.filter, got, err, c.stored)
		}
	}
	// Values.
	v, _ := kv.Base64Codec().EncodeValue([]byte("hello, world"))
	if string(v) != "aGVsbG8sIHdvcmxk" {
		t.Errorf("base64 value %q", v)
	}
	vc, err := kv.ChainValueCodecs(kv.Base64Codec(), kv.Base64Codec())
	if err != nil {
		t.Fatal(err)
	}
	twice, _ := vc.EncodeValue([]byte("x"))
	back, err := vc.DecodeValue(twice)
	if string(twice) != "ZUE" || string(back) != "x" || err != nil {
		t.Errorf("chained values: %q, %q, %v", twice, back, err)
	}
}

// TestCodecErrors: bad input is a typed error.
func TestCodecErrors(t *testing.T) {
	if _, err := kv.ChainKeyCodecs(); !errors.Is(err, kv.ErrNoCodecs) {
		t.Errorf("empty key chain: %v", err)
	}
	if _, err := kv.ChainValueCodecs(); !errors.Is(err, kv.ErrNoCodecs) {
		t.Errorf("empty value chain: %v", err)
	}
	chain, _ := kv.ChainKeyCodecs(kv.Base64Codec())
	if _, err := chain.DecodeKey("not base64!"); !errors.Is(err, kv.ErrKeyDecodeFailed) {
		t.Errorf("bad stored key: %v", err)
	}
	vc, _ := kv.ChainValueCodecs(kv.Base64Codec())
	if _, err := vc.DecodeValue([]byte("%%%")); !errors.Is(err, kv.ErrValueDecodeFailed) {
		t.Errorf("bad stored value: %v", err)
	}
	plain, _ := kv.ChainKeyCodecs(keyOnly{})
	if _, err := plain.EncodeFilter("a.*"); !errors.Is(err, kv.ErrWildcardNotSupported) {
		t.Errorf("filter through a codec without filters: %v", err)
	}
}

// keyOnly is a KeyCodec without EncodeFilter: it reverses each key.
type keyOnly struct{}

func (keyOnly) EncodeKey(k string) (string, error) { return reverse(k), nil }
func (keyOnly) DecodeKey(k string) (string, error) { return reverse(k), nil }

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}
