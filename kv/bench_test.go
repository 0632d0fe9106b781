package kv_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/natstest"
)

// processBucket creates a memory bucket on a server in a child process, so
// that allocation counts are the client's alone.
func processBucket(tb testing.TB) (*env, *kv.Bucket) {
	p := natstest.NewProcess(tb, true)
	e := envOn(tb, nil, p.URL())
	b, err := kv.CreateBucket(e.Ctx, e.JS, kv.Config{Bucket: "bench", Storage: jsapi.StorageMemory})
	if err != nil {
		tb.Fatal(err)
	}
	return e, b
}

// TestAllocs checks the allocation budget of Put and Get (≤ 3 each) with a
// context that has a deadline.
func TestAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	e, b := processBucket(t)
	ctx, cancel := context.WithTimeout(e.Ctx, 30*time.Second)
	defer cancel()
	val := make([]byte, 128)
	if _, err := b.Put(ctx, "key.1", val); err != nil {
		t.Fatal(err)
	}
	put := testing.AllocsPerRun(200, func() {
		if _, err := b.Put(ctx, "key.1", val); err != nil {
			t.Fatal(err)
		}
	})
	get := testing.AllocsPerRun(200, func() {
		if _, err := b.Get(ctx, "key.1"); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("Put %.2f allocs/op, Get %.2f allocs/op", put, get)
	if raceEnabled {
		t.Skip("allocation budget not checked under the race detector (sync.Pool drops items)")
	}
	if put > 3 || get > 3 {
		t.Fatalf("Put %.2f, Get %.2f allocs/op; budget 3", put, get)
	}
}

func BenchmarkPut128(b *testing.B) {
	e, bk := processBucket(b)
	ctx, cancel := context.WithTimeout(e.Ctx, 10*time.Minute)
	defer cancel()
	val := make([]byte, 128)
	b.ReportAllocs()
	b.SetBytes(128)
	for b.Loop() {
		if _, err := bk.Put(ctx, "key.1", val); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet128(b *testing.B) {
	e, bk := processBucket(b)
	ctx, cancel := context.WithTimeout(e.Ctx, 10*time.Minute)
	defer cancel()
	if _, err := bk.Put(ctx, "key.1", make([]byte, 128)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(128)
	for b.Loop() {
		if _, err := bk.Get(ctx, "key.1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPut128Background and BenchmarkGet128Background use a context
// without deadline: the default timeout costs a timer context per call.
func BenchmarkPut128Background(b *testing.B) {
	_, bk := processBucket(b)
	val := make([]byte, 128)
	b.ReportAllocs()
	b.SetBytes(128)
	for b.Loop() {
		if _, err := bk.Put(context.Background(), "key.1", val); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet128Background(b *testing.B) {
	_, bk := processBucket(b)
	if _, err := bk.Put(context.Background(), "key.1", make([]byte, 128)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(128)
	for b.Loop() {
		if _, err := bk.Get(context.Background(), "key.1"); err != nil {
			b.Fatal(err)
		}
	}
}

// rawClient is a bare TCP NATS client for the ceiling benchmarks: one
// request at a time, replies read with a bufio.Reader, nothing else.
type rawClient struct {
	c net.Conn
	r *bufio.Reader
}

func dialRaw(tb testing.TB, url string) *rawClient {
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "nats://"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	rc := &rawClient{c: c, r: bufio.NewReaderSize(c, 64<<10)}
	if _, err := rc.r.ReadString('\n'); err != nil { // INFO
		tb.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1}\r\nSUB _R.x 1\r\nPING\r\n")
	for {
		line, err := rc.r.ReadString('\n')
		if err != nil {
			tb.Fatal(err)
		}
		if strings.HasPrefix(line, "PONG") {
			return rc
		}
	}
}

// request writes req and reads until the reply message, returning its size.
func (rc *rawClient) request(tb testing.TB, req []byte) int {
	if _, err := rc.c.Write(req); err != nil {
		tb.Fatal(err)
	}
	for {
		line, err := rc.r.ReadSlice('\n')
		if err != nil {
			tb.Fatal(err)
		}
		switch {
		case bytes.HasPrefix(line, []byte("PING")):
			rc.c.Write([]byte("PONG\r\n"))
		case bytes.HasPrefix(line, []byte("MSG ")), bytes.HasPrefix(line, []byte("HMSG ")):
			f := bytes.Fields(line)
			n, _ := strconv.Atoi(string(f[len(f)-1]))
			if _, err := rc.r.Discard(n + 2); err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
}

// BenchmarkRawCeilingPut128 and BenchmarkRawCeilingGet128 are the
// raw-socket ceiling: the same JetStream round trips with no client
// library at all.
func BenchmarkRawCeilingPut128(b *testing.B) {
	p := natstest.NewProcess(b, true)
	e := envOn(b, nil, p.URL())
	if _, err := kv.CreateBucket(e.Ctx, e.JS, kv.Config{Bucket: "bench", Storage: jsapi.StorageMemory}); err != nil {
		b.Fatal(err)
	}
	rc := dialRaw(b, p.URL())
	req := append([]byte("PUB $KV.bench.key.1 _R.x 128\r\n"), make([]byte, 128)...)
	req = append(req, "\r\n"...)
	b.ReportAllocs()
	b.SetBytes(128)
	for b.Loop() {
		rc.request(b, req)
	}
}

func BenchmarkRawCeilingGet128(b *testing.B) {
	p := natstest.NewProcess(b, true)
	e := envOn(b, nil, p.URL())
	bk, err := kv.CreateBucket(e.Ctx, e.JS, kv.Config{Bucket: "bench", Storage: jsapi.StorageMemory})
	if err != nil {
		b.Fatal(err)
	}
	bk.Put(e.Ctx, "key.1", make([]byte, 128))
	rc := dialRaw(b, p.URL())
	req := []byte("PUB $JS.API.DIRECT.GET.KV_bench.$KV.bench.key.1 _R.x 0\r\n\r\n")
	b.ReportAllocs()
	b.SetBytes(128)
	for b.Loop() {
		if n := rc.request(b, req); n < 128 {
			b.Fatalf("reply of %d bytes", n)
		}
	}
}
