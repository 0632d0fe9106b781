package interop_test

import (
	"context"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/natsio/natsio/kv"
	"github.com/synadia-io/orbit.go/kvcodec"
)

// orbitWatch collects n entries (after the initial-values marker) of an
// orbit.go kvcodec watcher as "key=value".
func orbitWatch(t *testing.T, w jetstream.KeyWatcher, n int) []string {
	t.Helper()
	var out []string
	timeout := time.After(30 * time.Second)
	for len(out) < n {
		select {
		case e := <-w.Updates():
			if e != nil {
				out = append(out, e.Key()+"="+string(e.Value()))
			}
		case <-timeout:
			t.Fatalf("orbit.go watch: %d of %d entries: %v", len(out), n, out)
		}
	}
	return out
}

// natsioCodecWatch collects n entries of a natsio CodecBucket watch; ready
// is closed at its initial-values marker.
func natsioCodecWatch(t *testing.T, seq iter.Seq2[*kv.Entry, error], n int) (ready <-chan struct{}, entries <-chan []string) {
	t.Helper()
	ch := make(chan []string, 1)
	rd := make(chan struct{})
	go func() {
		var out []string
		for e, err := range seq {
			if err != nil {
				out = append(out, "error: "+err.Error())
				break
			}
			if e == nil {
				close(rd)
				continue
			}
			out = append(out, e.Key+"="+string(e.Value))
			if len(out) == n {
				break
			}
		}
		ch <- out
	}()
	return rd, ch
}

// TestKVCodecInterop: orbit.go's kvcodec (path then base64 keys, base64
// values) and natsio's codecs write one bucket; each reads what the other
// wrote, in Get, Keys and a wildcard watch, and the stored keys are the
// same bytes.
func TestKVCodecInterop(t *testing.T) {
	c := start(t)
	ctx := c.ctx
	ib, err := kv.CreateBucket(ctx, c.jsi, kv.Config{Bucket: "codec", History: 5})
	if err != nil {
		t.Fatal(err)
	}
	nb, err := c.js.KeyValue(ctx, "codec")
	if err != nil {
		t.Fatal(err)
	}
	okeys, err := kvcodec.NewKeyChainCodec(kvcodec.PathCodec(), kvcodec.Base64Codec())
	if err != nil {
		t.Fatal(err)
	}
	orbit := kvcodec.New(nb, okeys, kvcodec.Base64Codec())
	ikeys, err := kv.ChainKeyCodecs(kv.PathCodec(), kv.Base64Codec())
	if err != nil {
		t.Fatal(err)
	}
	nio := kv.WithCodecs(ib, ikeys, kv.Base64Codec())

	// Both watch /home/> before anything is written.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ow, err := orbit.Watch(wctx, "/home/>")
	if err != nil {
		t.Fatal(err)
	}
	defer ow.Stop()
	iready, iw := natsioCodecWatch(t, nio.Watch(wctx, "/home/>"), 4)
	// Wait for both watches' initial-values markers.
	select {
	case <-iready:
	case <-time.After(30 * time.Second):
		t.Fatal("natsio watch: no marker")
	}
	select {
	case e := <-ow.Updates():
		if e != nil {
			t.Fatalf("orbit.go watch: want the marker, got %v", e.Key())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("orbit.go watch: no marker")
	}

	// orbit.go writes two keys, natsio two; one of them twice.
	if _, err := orbit.Put(ctx, "/home/my docs", []byte("orbit 1")); err != nil {
		t.Fatal(err)
	}
	if _, err := nio.Put(ctx, "/home/ünï@code", []byte("natsio 1")); err != nil {
		t.Fatal(err)
	}
	if _, err := orbit.Put(ctx, "/etc/hosts", []byte("orbit 2")); err != nil {
		t.Fatal(err)
	}
	if _, err := nio.Put(ctx, "/home/my docs", []byte("natsio 2")); err != nil {
		t.Fatal(err)
	}
	if _, err := orbit.Put(ctx, "/home/a+b=c", []byte("orbit 3")); err != nil {
		t.Fatal(err)
	}

	// Each reads the other's writes.
	if e, err := nio.Get(ctx, "/etc/hosts"); err != nil || string(e.Value) != "orbit 2" {
		t.Fatalf("natsio Get of orbit.go's key: %+v %v", e, err)
	}
	if e, err := orbit.Get(ctx, "/home/ünï@code"); err != nil || string(e.Value()) != "natsio 1" || e.Key() != "/home/ünï@code" {
		t.Fatalf("orbit.go Get of natsio's key: %v", err)
	}
	if e, err := orbit.Get(ctx, "/home/my docs"); err != nil || string(e.Value()) != "natsio 2" {
		t.Fatalf("orbit.go Get of the key both wrote: %v", err)
	}
	want := []string{"/etc/hosts", "/home/a+b=c", "/home/my docs", "/home/ünï@code"}
	ik, err := nio.Keys(ctx)
	if err != nil || !slices.Equal(ik, want) {
		t.Fatalf("natsio Keys: %v %v, want %v", ik, err, want)
	}
	ok, err := orbit.Keys(ctx)
	slices.Sort(ok)
	if err != nil || !slices.Equal(ok, want) {
		t.Fatalf("orbit.go Keys: %v %v, want %v", ok, err, want)
	}

	// Both watches saw the same four /home entries, decoded.
	wantWatch := []string{"/home/my docs=orbit 1", "/home/ünï@code=natsio 1", "/home/my docs=natsio 2", "/home/a+b=c=orbit 3"}
	if got := orbitWatch(t, ow, 4); !slices.Equal(got, wantWatch) {
		t.Errorf("orbit.go watch:\n got %v\nwant %v", got, wantWatch)
	}
	select {
	case got := <-iw:
		if !slices.Equal(got, wantWatch) {
			t.Errorf("natsio watch:\n got %v\nwant %v", got, wantWatch)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("natsio watch: no entries")
	}

	// The stored keys are the same bytes: what one encodes is what the
	// other encodes.
	stored, err := ib.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range want {
		o, _ := okeys.EncodeKey(k)
		i, _ := ikeys.EncodeKey(k)
		if o != i || !slices.Contains(stored, i) {
			t.Errorf("%q: orbit.go stores %q, natsio %q; bucket has %v", k, o, i, stored)
		}
	}
}
