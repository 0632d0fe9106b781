package proto

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// opString renders an op for comparisons in tests.
func opString(op *Op) string {
	switch op.Kind {
	case KindInfo, KindConnect, KindErr:
		return fmt.Sprintf("%v %q", op.Kind, op.Text)
	case KindMsg, KindHMsg, KindPub, KindHPub:
		return fmt.Sprintf("%v %q %d %q %q %q", op.Kind, op.Subject, op.SID, op.Reply, op.Header, op.Payload)
	case KindSub:
		return fmt.Sprintf("%v %q %q %d", op.Kind, op.Subject, op.Queue, op.SID)
	case KindUnsub:
		return fmt.Sprintf("%v %d %d", op.Kind, op.SID, op.Max)
	}
	return op.Kind.String()
}

// parseChunks feeds chunks one by one and returns the ops and the error.
func parseChunks(p *Parser, chunks ...[]byte) ([]string, error) {
	var out []string
	for _, c := range chunks {
		p.Feed(c)
		for {
			op, err := p.Next()
			if err != nil {
				return out, err
			}
			if op == nil {
				break
			}
			out = append(out, opString(op))
		}
	}
	return out, nil
}

func TestParseServerOps(t *testing.T) {
	in := "INFO {\"server_id\":\"x\"}\r\n" +
		"MSG foo 1 5\r\nhello\r\n" +
		"msg\tfoo.bar\t22\treply.to   3 \r\nabc\r\n" +
		"HMSG foo 2 12 14\r\nNATS/1.0\r\n\r\nhi\r\n" +
		"HMSG _INBOX.x 3 16 16\r\nNATS/1.0 503\r\n\r\n\r\n" +
		"PING\r\nPONG\r\n+OK\r\n-ERR 'Stale Connection'\r\n" +
		"ping\npong  \r\n" +
		"MSG empty 4 0\r\n\r\n"
	want := []string{
		`INFO "{\"server_id\":\"x\"}"`,
		`MSG "foo" 1 "" "" "hello"`,
		`MSG "foo.bar" 22 "reply.to" "" "abc"`,
		`HMSG "foo" 2 "" "NATS/1.0\r\n\r\n" "hi"`,
		`HMSG "_INBOX.x" 3 "" "NATS/1.0 503\r\n\r\n" ""`,
		"PING", "PONG", "+OK", `-ERR "Stale Connection"`, "PING", "PONG",
		`MSG "empty" 4 "" "" ""`,
	}
	check := func(name string, chunks ...[]byte) {
		t.Helper()
		var p Parser
		got, err := parseChunks(&p, chunks...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s:\ngot  %q\nwant %q", name, got, want)
		}
		if p.Buffered() {
			t.Fatalf("%s: parser still mid-op", name)
		}
	}
	check("whole", []byte(in))
	for i := 1; i < len(in); i++ {
		check(fmt.Sprintf("split@%d", i), []byte(in[:i]), []byte(in[i:]))
	}
	var bytesEach [][]byte
	for i := range len(in) {
		bytesEach = append(bytesEach, []byte{in[i]})
	}
	check("bytewise", bytesEach...)
}

func TestParseClientOps(t *testing.T) {
	in := "CONNECT {\"verbose\":false}\r\nPUB a.b 3\r\nabc\r\nPUB a.b r.1 0\r\n\r\n" +
		"HPUB h 12 13\r\nNATS/1.0\r\n\r\nx\r\nSUB foo.* 7\r\nSUB foo q 8\r\nUNSUB 7\r\nUNSUB 8 10\r\nPING\r\n"
	want := []string{
		`CONNECT "{\"verbose\":false}"`,
		`PUB "a.b" 0 "" "" "abc"`,
		`PUB "a.b" 0 "r.1" "" ""`,
		`HPUB "h" 0 "" "NATS/1.0\r\n\r\n" "x"`,
		`SUB "foo.*" "" 7`, `SUB "foo" "q" 8`, "UNSUB 7 0", "UNSUB 8 10", "PING",
	}
	for i := 1; i <= len(in); i++ {
		p := Parser{ClientOps: true}
		got, err := parseChunks(&p, []byte(in[:i]), []byte(in[i:]))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("split@%d:\ngot  %q\nwant %q", i, got, want)
		}
	}
	// The server's ops are unknown to a client-side parser and vice versa.
	p := Parser{ClientOps: true}
	if _, err := parseChunks(&p, []byte("MSG a 1 0\r\n\r\n")); !errors.Is(err, ErrUnknownOp) {
		t.Fatalf("MSG on client side: %v", err)
	}
	var q Parser
	if _, err := parseChunks(&q, []byte("PUB a 0\r\n\r\n")); !errors.Is(err, ErrUnknownOp) {
		t.Fatalf("PUB on server side: %v", err)
	}
}

func TestParseOwnedPayload(t *testing.T) {
	var allocs int
	p := Parser{Alloc: func(n int) []byte { allocs++; return make([]byte, n) }}
	in := []byte("HMSG sub.j 9 rep 12 17\r\nNATS/1.0\r\n\r\nhello\r\n")
	p.Feed(in[:30])
	if op, err := p.Next(); op != nil || err != nil {
		t.Fatalf("early op %v %v", op, err)
	}
	// Overwrite the first chunk as a connection's read buffer would be.
	copied := bytes.Clone(in[30:])
	for i := range in {
		in[i] = 'X'
	}
	p.Feed(copied)
	op, err := p.Next()
	if err != nil || op == nil {
		t.Fatalf("op %v err %v", op, err)
	}
	if !op.Owned || allocs != 1 {
		t.Fatalf("owned %v allocs %d", op.Owned, allocs)
	}
	if got := opString(op); got != `HMSG "sub.j" 9 "rep" "NATS/1.0\r\n\r\n" "hello"` {
		t.Fatalf("got %s", got)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		in   string
		want error
	}{
		{"MSG foo 1 99999999999999999999\r\n", ErrSize},
		{"MSG foo 1 2097152\r\n", ErrPayloadTooLarge},
		{"MSG foo 1 -3\r\n", ErrSize},
		{"MSG foo 1 +3\r\n", ErrSize},
		{"MSG foo 1 3x\r\n", ErrSize},
		{"MSG foo -1 3\r\n", ErrSize},
		{"MSG foo 99999999999999999999999 3\r\n", ErrSize},
		{"MSG foo 1 3\r\nabcXX", ErrMissingCRLF},
		{"MSG foo 1 3\r\nabc\rX", ErrMissingCRLF},
		{"MSG foo 1 3\r\nabc\n\n", ErrMissingCRLF},
		{"HMSG foo 1 20 10\r\n", ErrHeaderSize},
		{"HMSG foo 1 5 10\r\n", ErrHeaderSize},
		{"MSG foo 1 bar baz\r\n", ErrSize},
		{"MSG  foo\r\n", ErrArgs},
		{"MSG \r\n", ErrArgs},
		{"MSG\r\n", ErrArgs},
		{"MSG a b c d e f g\r\n", ErrArgs},
		{"HMSG foo 1 12\r\n", ErrArgs},
		{"ZOO\r\n", ErrUnknownOp},
		{"Ivan\r\n", ErrUnknownOp},
		{" PING\r\n", ErrUnknownOp},
		{"PINGX\r\n", ErrUnknownOp},
		{"PING X\r\n", ErrArgs},
		{"MSGX foo 1 1\r\n", ErrUnknownOp},
		{"\r\n", ErrUnknownOp},
		{"INFO \r\n", ErrArgs},
		{"MSG foo 1 " + strings.Repeat("1", 5000) + "\r\n", ErrControlLine},
		{"MSG " + strings.Repeat("1", 64<<10), ErrControlLine},
		{"INFO {" + strings.Repeat(" ", 2<<20), ErrControlLine},
	}
	for _, c := range cases {
		for _, split := range []int{0, 1, 5, len(c.in) / 2} {
			var p Parser
			p.Limits.MaxPayload = 1 << 20
			chunks := [][]byte{[]byte(c.in)}
			if split > 0 && split < len(c.in) {
				chunks = [][]byte{[]byte(c.in[:split]), []byte(c.in[split:])}
			}
			_, err := parseChunks(&p, chunks...)
			if !errors.Is(err, c.want) {
				t.Errorf("%q split %d: got %v, want %v", Excerpt([]byte(c.in)), split, err, c.want)
				continue
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Offset < 0 {
				t.Errorf("%q: not a *Error with offset: %#v", c.in, err)
			}
			// After an error the parser starts over cleanly.
			got, err := parseChunks(&p, []byte("PING\r\n"))
			if err != nil || len(got) != 1 || got[0] != "PING" {
				t.Errorf("%q: after error got %v %v", c.in, got, err)
			}
		}
	}
}

func TestErrorTextEscaped(t *testing.T) {
	var p Parser
	_, err := parseChunks(&p, []byte("\x1b[31mZOO\r\n"))
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\r\n") {
		t.Fatalf("unescaped error text: %q", err)
	}
}

func TestLimitsConfigurable(t *testing.T) {
	p := Parser{Limits: Limits{MaxControlLine: 16, MaxPayload: 4}}
	if _, err := parseChunks(&p, []byte("MSG a.very.long.subject 1 1\r\nx\r\n")); !errors.Is(err, ErrControlLine) {
		t.Fatalf("control line: %v", err)
	}
	if _, err := parseChunks(&p, []byte("MSG a 1 5\r\nhello\r\n")); !errors.Is(err, ErrPayloadTooLarge) {
		t.Fatalf("payload: %v", err)
	}
	if got, err := parseChunks(&p, []byte("MSG a 1 4\r\nhell\r\n")); err != nil || len(got) != 1 {
		t.Fatalf("at limit: %v %v", got, err)
	}
}
