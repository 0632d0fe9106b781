package proto

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/natsio/natsio/internal/wire"
)

// multiHeader is a header with a repeated key, used by several tests.
func multiHeader() *Header {
	var h Header
	h.Add("A", "1")
	h.Add("A", "2")
	h.Add("B", "x")
	return &h
}

// received returns a header reading block in place, as a message's.
func received(block string) *Header {
	h := HeaderFromBlock([]byte(block))
	return &h
}

func TestAppendExact(t *testing.T) {
	hello := []byte("hello")
	noErr := func(f func([]byte) []byte) func([]byte) ([]byte, error) {
		return func(b []byte) ([]byte, error) { return f(b), nil }
	}
	cases := []struct {
		name string
		fn   func(dst []byte) ([]byte, error)
		want string
	}{
		{"PUB", func(b []byte) ([]byte, error) { return AppendPub(b, "foo", "", hello) },
			"PUB foo 5\r\nhello\r\n"},
		{"PUB reply", func(b []byte) ([]byte, error) { return AppendPub(b, "foo.bar", "_INBOX.1", hello) },
			"PUB foo.bar _INBOX.1 5\r\nhello\r\n"},
		{"PUB empty", func(b []byte) ([]byte, error) { return AppendPub(b, "foo", "", nil) },
			"PUB foo 0\r\n\r\n"},
		{"PUB binary", func(b []byte) ([]byte, error) { return AppendPub(b, "é", "", []byte("\r\n\x00")) },
			"PUB é 3\r\n\r\n\x00\r\n"},
		{"PUB 1KiB", func(b []byte) ([]byte, error) { return AppendPub(b, "big", "", bytes.Repeat([]byte("z"), 1024)) },
			"PUB big 1024\r\n" + strings.Repeat("z", 1024) + "\r\n"},
		{"HPUB nil header", func(b []byte) ([]byte, error) { return AppendHPub(b, "foo", "", nil, hello) },
			"HPUB foo 12 17\r\nNATS/1.0\r\n\r\nhello\r\n"},
		{"HPUB empty header", func(b []byte) ([]byte, error) { return AppendHPub(b, "foo", "", &Header{}, nil) },
			"HPUB foo 12 12\r\nNATS/1.0\r\n\r\n\r\n"},
		{"HPUB reply", func(b []byte) ([]byte, error) { return AppendHPub(b, "foo", "r.1", nil, hello) },
			"HPUB foo r.1 12 17\r\nNATS/1.0\r\n\r\nhello\r\n"},
		{"HPUB multi-valued", func(b []byte) ([]byte, error) { return AppendHPub(b, "foo", "", multiHeader(), hello) },
			"HPUB foo 30 35\r\nNATS/1.0\r\nA: 1\r\nA: 2\r\nB: x\r\n\r\nhello\r\n"},
		{"HPUB case kept", func(b []byte) ([]byte, error) {
			var h Header
			h.Add("Nats-TTL", "5s")
			return AppendHPub(b, "s", "r", &h, []byte("x"))
		}, "HPUB s r 26 27\r\nNATS/1.0\r\nNats-TTL: 5s\r\n\r\nx\r\n"},
		{"HPUB received header forwarded", func(b []byte) ([]byte, error) {
			return AppendHPub(b, "foo", "", received("NATS/1.0\r\nK:  v \r\n\r\n"), hello)
		}, "HPUB foo 20 25\r\nNATS/1.0\r\nK:  v \r\n\r\nhello\r\n"},
		{"HPUB received status forwarded", func(b []byte) ([]byte, error) {
			return AppendHPub(b, "foo", "r", received("NATS/1.0 503\r\n\r\n"), []byte("x"))
		}, "HPUB foo r 16 17\r\nNATS/1.0 503\r\n\r\nx\r\n"},
		{"HPUB received header modified", func(b []byte) ([]byte, error) {
			h := received("NATS/1.0 503\r\nK:  v \r\nJ: 1\r\n\r\n")
			h.Set("J", "2")
			return AppendHPub(b, "foo", "", h, nil)
		}, "HPUB foo 24 24\r\nNATS/1.0\r\nK: v\r\nJ: 2\r\n\r\n\r\n"},
		{"SUB", func(b []byte) ([]byte, error) { return AppendSub(b, "foo.*", "", 7) },
			"SUB foo.* 7\r\n"},
		{"SUB queue", func(b []byte) ([]byte, error) { return AppendSub(b, "foo.>", "workers", 8) },
			"SUB foo.> workers 8\r\n"},
		{"SUB sid 0", func(b []byte) ([]byte, error) { return AppendSub(b, "a", "", 0) },
			"SUB a 0\r\n"},
		{"SUB max sid", func(b []byte) ([]byte, error) { return AppendSub(b, "a", "q", math.MaxUint64) },
			"SUB a q 18446744073709551615\r\n"},
		{"UNSUB", noErr(func(b []byte) []byte { return AppendUnsub(b, 7, 0) }), "UNSUB 7\r\n"},
		{"UNSUB max", noErr(func(b []byte) []byte { return AppendUnsub(b, 8, 10) }), "UNSUB 8 10\r\n"},
		{"UNSUB big", noErr(func(b []byte) []byte { return AppendUnsub(b, math.MaxUint64, math.MaxUint64) }),
			"UNSUB 18446744073709551615 18446744073709551615\r\n"},
		{"CONNECT", noErr(func(b []byte) []byte { return AppendConnect(b, []byte(`{"verbose":false}`)) }),
			"CONNECT {\"verbose\":false}\r\n"},
		{"PING", noErr(AppendPing), "PING\r\n"},
		{"PONG", noErr(AppendPong), "PONG\r\n"},
		{"INFO", noErr(func(b []byte) []byte { return wire.AppendInfo(b, []byte(`{"max_payload":1048576}`)) }),
			"INFO {\"max_payload\":1048576}\r\n"},
		{"MSG", noErr(func(b []byte) []byte { return wire.AppendMsg(b, "foo", 1, "", hello) }),
			"MSG foo 1 5\r\nhello\r\n"},
		{"MSG reply", noErr(func(b []byte) []byte { return wire.AppendMsg(b, "foo", 22, "r.1", nil) }),
			"MSG foo 22 r.1 0\r\n\r\n"},
		{"HMSG", noErr(func(b []byte) []byte {
			return wire.AppendHMsg(b, "foo", 2, "", []byte("NATS/1.0\r\n\r\n"), []byte("hi"))
		}), "HMSG foo 2 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"},
		{"HMSG reply", noErr(func(b []byte) []byte {
			return wire.AppendHMsg(b, "_INBOX.x", 3, "r", []byte("NATS/1.0 503\r\n\r\n"), nil)
		}), "HMSG _INBOX.x 3 r 16 16\r\nNATS/1.0 503\r\n\r\n\r\n"},
		{"-ERR", noErr(func(b []byte) []byte { return wire.AppendErr(b, "Stale Connection") }),
			"-ERR 'Stale Connection'\r\n"},
		{"+OK", noErr(wire.AppendOK), "+OK\r\n"},
	}
	for _, c := range cases {
		for _, pre := range []string{"", "prefix"} {
			dst := append(make([]byte, 0, 4), pre...)
			got, err := c.fn(dst)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if string(got) != pre+c.want {
				t.Errorf("%s:\ngot  %q\nwant %q", c.name, got, pre+c.want)
			}
		}
	}
}

func TestAppendInvalidLeavesDst(t *testing.T) {
	badKey, badValue := &Header{}, &Header{}
	badKey.Add("Good", "1")
	badKey.Add("Bad Key", "1")
	badValue.Add("K", "line\r\nInjected: yes")
	p := []byte("payload")
	cases := []struct {
		name string
		fn   func(dst []byte) ([]byte, error)
		want error
	}{
		{"PUB empty subject", func(b []byte) ([]byte, error) { return AppendPub(b, "", "", p) }, ErrBadSubject},
		{"PUB space", func(b []byte) ([]byte, error) { return AppendPub(b, "a b", "", p) }, ErrBadSubject},
		{"PUB CRLF injection", func(b []byte) ([]byte, error) { return AppendPub(b, "a\r\nPUB b", "", p) }, ErrBadSubject},
		{"PUB wildcard", func(b []byte) ([]byte, error) { return AppendPub(b, "a.*", "", p) }, ErrBadSubject},
		{"PUB full wildcard", func(b []byte) ([]byte, error) { return AppendPub(b, ">", "", p) }, ErrBadSubject},
		{"PUB empty token", func(b []byte) ([]byte, error) { return AppendPub(b, "a..b", "", p) }, ErrBadSubject},
		{"PUB bad utf8", func(b []byte) ([]byte, error) { return AppendPub(b, "\xff", "", p) }, ErrBadSubject},
		{"PUB bad reply", func(b []byte) ([]byte, error) { return AppendPub(b, "a", "r r", p) }, ErrBadSubject},
		{"PUB wildcard reply", func(b []byte) ([]byte, error) { return AppendPub(b, "a", "r.*", p) }, ErrBadSubject},
		{"PUB reply dot", func(b []byte) ([]byte, error) { return AppendPub(b, "a", ".", p) }, ErrBadSubject},
		{"HPUB bad subject", func(b []byte) ([]byte, error) { return AppendHPub(b, "a.", "", nil, p) }, ErrBadSubject},
		{"HPUB bad reply", func(b []byte) ([]byte, error) { return AppendHPub(b, "a", "r\t", nil, p) }, ErrBadSubject},
		{"HPUB bad key", func(b []byte) ([]byte, error) { return AppendHPub(b, "a", "", badKey, p) }, ErrBadHeader},
		{"HPUB bad value", func(b []byte) ([]byte, error) { return AppendHPub(b, "a", "r", badValue, p) }, ErrBadHeader},
		{"HPUB received bad subject", func(b []byte) ([]byte, error) {
			return AppendHPub(b, "", "", received("NATS/1.0\r\n\r\n"), p)
		}, ErrBadSubject},
		{"HPUB received bad reply", func(b []byte) ([]byte, error) {
			return AppendHPub(b, "a", ">", received("NATS/1.0\r\n\r\n"), p)
		}, ErrBadSubject},
		{"HPUB received truncated block", func(b []byte) ([]byte, error) {
			return AppendHPub(b, "a", "", received("NATS/1.0\r\n"), p)
		}, ErrBadHeader},
		{"HPUB received bad key", func(b []byte) ([]byte, error) {
			return AppendHPub(b, "a", "", received("NATS/1.0\r\nA b: c\r\n\r\n"), p)
		}, ErrBadHeader},
		{"HPUB received bad version", func(b []byte) ([]byte, error) {
			return AppendHPub(b, "a", "", received("HTTP/1.1\r\n\r\n"), p)
		}, ErrBadHeader},
		{"SUB empty", func(b []byte) ([]byte, error) { return AppendSub(b, "", "", 1) }, ErrBadSubject},
		{"SUB > not last", func(b []byte) ([]byte, error) { return AppendSub(b, "a.>.b", "", 1) }, ErrBadSubject},
		{"SUB space", func(b []byte) ([]byte, error) { return AppendSub(b, "a b", "q", 1) }, ErrBadSubject},
		{"SUB queue space", func(b []byte) ([]byte, error) { return AppendSub(b, "a", "q q", 1) }, ErrBadQueue},
		{"SUB queue newline", func(b []byte) ([]byte, error) { return AppendSub(b, "a", "q\n", 1) }, ErrBadQueue},
		{"SUB queue bad utf8", func(b []byte) ([]byte, error) { return AppendSub(b, "a", "\xff", 1) }, ErrBadQueue},
		{"SUB queue DEL", func(b []byte) ([]byte, error) { return AppendSub(b, "a", "q\x7f", 1) }, ErrBadQueue},
		{"header block bad key", func(b []byte) ([]byte, error) { return AppendHeaderBlock(b, badKey) }, ErrBadHeader},
		{"header block bad value", func(b []byte) ([]byte, error) { return AppendHeaderBlock(b, badValue) }, ErrBadHeader},
	}
	for _, c := range cases {
		// dst has content and spare capacity filled with a marker, so a
		// write past len(dst) before the validation failed would show.
		dst := make([]byte, 4, 256)
		copy(dst, "keep")
		spare := dst[:cap(dst)]
		for i := 4; i < len(spare); i++ {
			spare[i] = '#'
		}
		got, err := c.fn(dst)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
		if len(got) != len(dst) || string(got) != "keep" || &got[0] != &dst[0] {
			t.Errorf("%s: returned %q (len %d), want dst %q unchanged", c.name, got, len(got), "keep")
		}
		if i := bytes.IndexFunc(spare[4:], func(r rune) bool { return r != '#' }); i >= 0 {
			t.Errorf("%s: wrote into dst's spare capacity: %q", c.name, spare[4:min(len(spare), 4+i+8)])
		}
	}
}

func TestAppendRoundTripClient(t *testing.T) {
	h := multiHeader()
	h.Add("Nats-TTL", "5s")
	var buf []byte
	var err error
	var want []string
	add := func(b []byte, e error, w string) {
		t.Helper()
		if e != nil {
			t.Fatal(e)
		}
		buf = b
		want = append(want, w)
	}
	blk, _ := AppendHeaderBlock(nil, h)
	buf = AppendConnect(buf, []byte(`{"verbose":false,"headers":true}`))
	want = append(want, `CONNECT "{\"verbose\":false,\"headers\":true}"`)
	b, err := AppendPub(buf, "a.b", "", []byte("abc"))
	add(b, err, `PUB "a.b" 0 "" "" "abc"`)
	b, err = AppendPub(buf, "a.b", "_INBOX.r", nil)
	add(b, err, `PUB "a.b" 0 "_INBOX.r" "" ""`)
	b, err = AppendPub(buf, "bin", "", []byte("\r\nPING\r\n"))
	add(b, err, `PUB "bin" 0 "" "" "\r\nPING\r\n"`)
	b, err = AppendHPub(buf, "h", "", nil, []byte("x"))
	add(b, err, `HPUB "h" 0 "" "NATS/1.0\r\n\r\n" "x"`)
	b, err = AppendHPub(buf, "h", "rep", h, []byte("yz"))
	add(b, err, fmt.Sprintf(`HPUB "h" 0 "rep" %q "yz"`, blk))
	b, err = AppendHPub(buf, "raw", "", received("NATS/1.0\r\nK: v\r\n\r\n"), nil)
	add(b, err, `HPUB "raw" 0 "" "NATS/1.0\r\nK: v\r\n\r\n" ""`)
	b, err = AppendSub(buf, "foo.*", "", 7)
	add(b, err, `SUB "foo.*" "" 7`)
	b, err = AppendSub(buf, "foo.>", "q", math.MaxUint64)
	add(b, err, `SUB "foo.>" "q" 18446744073709551615`)
	buf = AppendUnsub(buf, 7, 0)
	want = append(want, "UNSUB 7 0")
	buf = AppendUnsub(buf, 8, 10)
	want = append(want, "UNSUB 8 10")
	buf = AppendPing(buf)
	buf = AppendPong(buf)
	want = append(want, "PING", "PONG")

	for i := 0; i <= len(buf); i++ {
		p := Parser{ClientOps: true}
		got, err := parseChunks(&p, buf[:i], buf[i:])
		if err != nil {
			t.Fatalf("split@%d: %v", i, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("split@%d:\ngot  %q\nwant %q", i, got, want)
		}
	}

	// The header block parsed back gives the same fields.
	p := Parser{ClientOps: true}
	b, _ = AppendHPub(nil, "h", "", h, []byte("yz"))
	p.Feed(b)
	op, err := p.Next()
	if err != nil || op == nil {
		t.Fatalf("HPUB: %v %v", op, err)
	}
	if err := ValidateHeaderBlock(op.Header); err != nil {
		t.Fatal(err)
	}
	back := HeaderFromBlock(op.Header)
	if !slices.Equal(fields(&back), fields(h)) {
		t.Fatalf("header round trip %q, want %q", fields(&back), fields(h))
	}
}

func TestAppendRoundTripServer(t *testing.T) {
	var buf []byte
	buf = wire.AppendInfo(buf, []byte(`{"server_id":"x","headers":true}`))
	buf = wire.AppendMsg(buf, "foo", 1, "", []byte("hello"))
	buf = wire.AppendMsg(buf, "foo.bar", 22, "reply.to", nil)
	buf = wire.AppendHMsg(buf, "h", 3, "", []byte("NATS/1.0 503\r\n\r\n"), nil)
	buf = wire.AppendHMsg(buf, "h", 4, "r", []byte("NATS/1.0\r\nA: 1\r\n\r\n"), []byte("pay"))
	buf = AppendPing(buf)
	buf = AppendPong(buf)
	buf = wire.AppendOK(buf)
	buf = wire.AppendErr(buf, "Permissions Violation for Publish to foo")
	want := []string{
		`INFO "{\"server_id\":\"x\",\"headers\":true}"`,
		`MSG "foo" 1 "" "" "hello"`,
		`MSG "foo.bar" 22 "reply.to" "" ""`,
		`HMSG "h" 3 "" "NATS/1.0 503\r\n\r\n" ""`,
		`HMSG "h" 4 "r" "NATS/1.0\r\nA: 1\r\n\r\n" "pay"`,
		"PING", "PONG", "+OK", `-ERR "Permissions Violation for Publish to foo"`,
	}
	for i := 0; i <= len(buf); i++ {
		var p Parser
		got, err := parseChunks(&p, buf[:i], buf[i:])
		if err != nil {
			t.Fatalf("split@%d: %v", i, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("split@%d:\ngot  %q\nwant %q", i, got, want)
		}
	}
}

func TestAppendPayloadSizes(t *testing.T) {
	for _, n := range []int{0, 1, 2, 9, 10, 99, 100, 4095, 4096, 65536, 1 << 20} {
		payload := bytes.Repeat([]byte{'\n'}, n)
		buf, err := AppendPub(nil, "s", "", payload)
		if err != nil {
			t.Fatal(err)
		}
		buf, err = AppendHPub(buf, "s", "", multiHeader(), payload)
		if err != nil {
			t.Fatal(err)
		}
		p := Parser{ClientOps: true}
		p.Feed(buf)
		for _, kind := range []Kind{KindPub, KindHPub} {
			op, err := p.Next()
			if err != nil || op == nil {
				t.Fatalf("size %d: %v %v", n, op, err)
			}
			if op.Kind != kind || !bytes.Equal(op.Payload, payload) {
				t.Fatalf("size %d: got %v with %d payload bytes", n, op.Kind, len(op.Payload))
			}
		}
		if op, err := p.Next(); op != nil || err != nil {
			t.Fatalf("size %d: trailing %v %v", n, op, err)
		}
	}
}

func TestAppendSize(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 42, 99, 100, 512, 999, 1000, 1024, 65535, 1 << 20, 64 << 20, 1<<62 + 12345} {
		if got, want := string(wire.AppendSize([]byte("x"), n)), "x"+strconv.Itoa(n); got != want {
			t.Errorf("AppendSize(%d) = %q, want %q", n, got, want)
		}
	}
}
