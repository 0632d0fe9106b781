//go:build !race

package proto

import (
	"testing"

	"github.com/natsio/natsio/internal/wire"
)

// The race detector's instrumentation allocates, hence the build tag.

func TestZeroAllocs(t *testing.T) {
	var p Parser
	s := newSlab(1 << 20)
	spans := 0
	p.Alloc = func(n int) []byte { spans++; return s.alloc(n) }
	var h, built Header
	dst := make([]byte, 0, 4096)
	raw := HeaderFromBlock(statusBlock)
	fwd := HeaderFromBlock(benchBlock)
	var err error
	parse := func(buf []byte, ops, chunk int) func() {
		return func() {
			if n := feedAll(t, &p, buf, chunk); n != ops {
				t.Fatalf("parsed %d ops, want %d", n, ops)
			}
		}
	}
	cases := []struct {
		name string
		f    func()
	}{
		{"parse MSG 16B", parse(msg16, 1, 0)},
		{"parse MSG 1KiB", parse(msg1k, 1, 0)},
		{"parse HMSG", parse(hmsg16, 1, 0)},
		{"parse 64KiB of MSG 16B", parse(buf16, ops16, 0)},
		{"parse 64KiB of MSG 1KiB", parse(buf1k, ops1k, 0)},
		{"parse 64KiB of HMSG", parse(bufH16, opsH16, 0)},
		{"parse MSG 16B split", parse(buf16, ops16, benchChunk)},
		{"parse MSG 1KiB split", parse(buf1k, ops1k, benchChunk)},
		{"parse HMSG split", parse(bufH16, opsH16, benchChunk)},
		{"parse MSG 1KiB bytewise", parse(msg1k, 1, 1)},
		{"parse PING PONG +OK -ERR INFO", parse([]byte("PING\r\nPONG\r\n+OK\r\n-ERR 'x'\r\nINFO {\"a\":1}\r\n"), 5, 0)},
		{"AppendPub 16B", func() { dst, err = AppendPub(dst[:0], benchSubject, "", payload16) }},
		{"AppendPub 1KiB reply", func() { dst, err = AppendPub(dst[:0], benchSubject, benchReply, payload1k) }},
		{"AppendHPub reused Header", func() { dst, err = AppendHPub(dst[:0], benchSubject, benchReply, benchHeader(&h), payload16) }},
		{"AppendHPub nil Header", func() { dst, err = AppendHPub(dst[:0], benchSubject, "", nil, payload16) }},
		{"AppendHPub received Header (forwarding)", func() { dst, err = AppendHPub(dst[:0], benchSubject, "", &fwd, payload16) }},
		{"build reused Header and AppendHPub", func() {
			b := &built
			b.Reset()
			b.Add("Nats-Msg-Id", "b7e2c9d4-6f1a-4c55-9a39-1d2e3f4a5b6c")
			b.Set("Nats-TTL", "5s")
			dst, err = AppendHPub(dst[:0], benchSubject, "", b, payload16)
		}},
		{"ValidatePublishSubject + wire.AppendPubUnchecked", func() {
			if err = ValidatePublishSubject(benchSubject); err == nil {
				dst = wire.AppendPubUnchecked(dst[:0], benchSubject, "", payload16)
			}
		}},
		{"AppendSub", func() { dst, err = AppendSub(dst[:0], "events.*.created", "workers", 42) }},
		{"AppendUnsub", func() { dst = AppendUnsub(dst[:0], 42, 10) }},
		{"AppendPing", func() { dst = AppendPing(dst[:0]) }},
		{"AppendHeaderBlock", func() { dst, err = AppendHeaderBlock(dst[:0], &h) }},
		{"received Header.Lookup", func() {
			if v, ok := raw.Lookup("Nats-Last-Stream"); !ok || v != "9" {
				t.Fatal("lookup")
			}
		}},
		{"received Header.Lookup missing", func() {
			if _, ok := raw.Lookup("Nats-Missing"); ok {
				t.Fatal("lookup")
			}
		}},
		{"received Header.Get", func() {
			if raw.Get("Nats-Last-Consumer") != "5" {
				t.Fatal("get")
			}
		}},
		{"received Header.Values", func() {
			for v := range raw.Values("Nats-Last-Stream") {
				if v != "9" {
					t.Fatal("values")
				}
			}
		}},
		{"received Header.Status", func() {
			if code, desc := raw.Status(); code != 100 || desc != "Idle Heartbeat" {
				t.Fatal("status")
			}
		}},
		{"received Header.Validate", func() {
			if raw.Validate() != nil {
				t.Fatal("validate")
			}
		}},
		{"ValidateHeaderBlock", func() {
			if ValidateHeaderBlock(statusBlock) != nil {
				t.Fatal("validate")
			}
		}},
		{"received Header.All", func() {
			for k, v := range raw.All() {
				if len(k) == 0 || len(v) == 0 {
					t.Fatal("all")
				}
			}
		}},
		{"received Header.Len", func() {
			if raw.Len() != 2 {
				t.Fatal("len")
			}
		}},
		{"HeaderFromBlock", func() {
			h := HeaderFromBlock(statusBlock)
			if h.IsZero() {
				t.Fatal("zero")
			}
		}},
		{"Header.Get", func() {
			if h.Get("Nats-Expected-Last-Sequence") != "1234567" {
				t.Fatal("get")
			}
		}},
		{"Header.Values", func() {
			for v := range h.Values("Nats-Msg-Id") {
				if v == "" {
					t.Fatal("values")
				}
			}
		}},
		{"Header.Set", func() { h.Set("Nats-Msg-Id", "x") }},
		{"ValidatePublishSubject", func() {
			if ValidatePublishSubject("événements.orders.created") != nil {
				t.Fatal("validate")
			}
		}},
		{"ValidateSubscribeSubject", func() {
			if ValidateSubscribeSubject("events.*.>") != nil {
				t.Fatal("validate")
			}
		}},
		{"ParseUint", func() {
			if n, ok := ParseUint([]byte("18446744073709551615")); !ok || n == 0 {
				t.Fatal("parse")
			}
		}},
	}
	benchHeader(&h)
	for _, c := range cases {
		if n := testing.AllocsPerRun(100, c.f); n != 0 {
			t.Errorf("%s: %v allocs per run, want 0", c.name, n)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		benchHeader(&h)
	}
	if spans == 0 {
		t.Errorf("split parses never took the spanning path (Alloc not called)")
	}
}

// TestHeaderBuildAllocs: the first Add allocates room for four fields, so
// building a header of up to four fields costs one allocation, NewHeader
// of up to four one too, and modifying a received header of up to three
// fields one.
func TestHeaderBuildAllocs(t *testing.T) {
	var sink *Header
	cases := []struct {
		name string
		f    func()
		want float64
	}{
		{"Add 1", func() { var h Header; h.Add("A", "1"); sink = &h }, 2}, // the Header escapes too
		{"Add 4", func() {
			h := new(Header)
			h.Add("A", "1")
			h.Set("B", "2")
			h.Add("C", "3")
			h.Add("D", "4")
			sink = h
		}, 2},
		{"NewHeader 4", func() { sink = NewHeader("A", "1", "B", "2", "C", "3", "D", "4") }, 1},
		{"modify a received header", func() {
			h := new(Header)
			*h = HeaderFromBlock(statusBlock)
			h.Set("Nats-Last-Stream", "10")
			sink = h
		}, 2},
		{"Clone a received header", func() { sink = fwdHeader.Clone() }, 2},
	}
	for _, c := range cases {
		if n := testing.AllocsPerRun(100, c.f); n != c.want {
			t.Errorf("%s: %v allocs per run, want %v", c.name, n, c.want)
		}
	}
	_ = sink
}

var fwdHeader = HeaderFromBlock(statusBlock)

// TestSpanningCopiesOnce: with the default Alloc, a message that spans
// chunks costs exactly one allocation (its header and payload), and one in
// a single chunk none.
func TestSpanningCopiesOnce(t *testing.T) {
	var p Parser
	half := len(hmsg16) / 2
	n := testing.AllocsPerRun(100, func() {
		p.Feed(hmsg16[:half])
		if op, err := p.Next(); op != nil || err != nil {
			t.Fatal("early op")
		}
		p.Feed(hmsg16[half:])
		if op, err := p.Next(); op == nil || err != nil || !op.Owned {
			t.Fatal("no owned op")
		}
	})
	if n != 1 {
		t.Errorf("spanning HMSG: %v allocs, want 1", n)
	}
}
