package proto

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// splits returns in cut every possible way into two chunks, plus whole and
// one byte per chunk.
func splits(in string) [][][]byte {
	out := [][][]byte{{[]byte(in)}}
	for i := 1; i < len(in); i++ {
		out = append(out, [][]byte{[]byte(in[:i]), []byte(in[i:])})
	}
	var each [][]byte
	for i := range len(in) {
		each = append(each, []byte{in[i]})
	}
	return append(out, each)
}

// chunked cuts in into chunks of n bytes.
func chunked(in string, n int) [][]byte {
	var out [][]byte
	for len(in) > n {
		out = append(out, []byte(in[:n]))
		in = in[n:]
	}
	return append(out, []byte(in))
}

// parseScribble is parseChunks on private copies of the chunks, each of which
// is overwritten as soon as Next has consumed it, as a connection reusing
// its read buffer would do. Ops are rendered before anything else happens.
func parseScribble(p *Parser, chunks ...[]byte) ([]string, error) {
	var out []string
	for _, c := range chunks {
		c = bytes.Clone(c)
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
		for i := range c {
			c[i] = 'X'
		}
	}
	return out, nil
}

func TestParseAcceptsLenientForms(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"mSg foo 1 3\r\nabc\r\n", []string{`MSG "foo" 1 "" "" "abc"`}},
		{"msg foo 1 3\r\nabc\r\n", []string{`MSG "foo" 1 "" "" "abc"`}},
		{"hMsG foo 1 12 12\r\nNATS/1.0\r\n\r\n\r\n", []string{`HMSG "foo" 1 "" "NATS/1.0\r\n\r\n" ""`}},
		{"MSG foo 1 3\nabc\r\n", []string{`MSG "foo" 1 "" "" "abc"`}}, // LF-only control line
		{"PING\nPONG\n", []string{"PING", "PONG"}},
		{"PING \t\r\npong\t\n", []string{"PING", "PONG"}},
		{"PING\r\r\n", []string{"PING"}},
		{"+ok\r\n-err 'x'\r\n", []string{"+OK", `-ERR "x"`}},
		{"-ERR   'Authorization Violation'  \r\n", []string{`-ERR "Authorization Violation"`}},
		{"-ERR unquoted text\r\n", []string{`-ERR "unquoted text"`}},
		{"INFO  {}  \r\n", []string{`INFO "{}"`}},
		{"info {\"a\":1}\n", []string{`INFO "{\"a\":1}"`}},
		{"MSG foo 1 3 \t \r\nabc\r\n", []string{`MSG "foo" 1 "" "" "abc"`}}, // trailing blanks
		{"MSG\t\tfoo  1\t \t3\r\nabc\r\n", []string{`MSG "foo" 1 "" "" "abc"`}},
		{"MSG foo 1 r 3\r\nabc\r\n", []string{`MSG "foo" 1 "r" "" "abc"`}},
		{"HMSG foo 1 reply.x 12 14\r\nNATS/1.0\r\n\r\nhi\r\n", []string{`HMSG "foo" 1 "reply.x" "NATS/1.0\r\n\r\n" "hi"`}},
		{"HMSG foo 1 reply.x 16 16 \r\nNATS/1.0 503\r\n\r\n\r\n", []string{`HMSG "foo" 1 "reply.x" "NATS/1.0 503\r\n\r\n" ""`}},
		{"MSG foo 18446744073709551615 0\r\n\r\n", []string{`MSG "foo" 18446744073709551615 "" "" ""`}},
		{"MSG foo 007 003\r\nabc\r\n", []string{`MSG "foo" 7 "" "" "abc"`}}, // leading zeros
		{"MSG foo 0 0\r\n\r\n", []string{`MSG "foo" 0 "" "" ""`}},
		{"HMSG foo 1 0 2\r\nhi\r\n", []string{`HMSG "foo" 1 "" "" "hi"`}},         // hdr_size 0: no header block
		{"MSG foo 1 4\r\n\r\n\r\n\r\n", []string{`MSG "foo" 1 "" "" "\r\n\r\n"`}}, // payload is opaque
		{"MSG foo 1 5\r\nMSG x\r\nPING\r\n", []string{`MSG "foo" 1 "" "" "MSG x"`, "PING"}},
		{"MSG é.ü 1 0\r\n\r\n", []string{`MSG "é.ü" 1 "" "" ""`}},
	}
	for _, c := range cases {
		for _, chunks := range splits(c.in) {
			var p Parser
			got, err := parseScribble(&p, chunks...)
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("%q in %d chunks: got %q, %v; want %q", c.in, len(chunks), got, err, c.want)
				break
			}
			if p.Buffered() {
				t.Errorf("%q in %d chunks: parser still mid-op", c.in, len(chunks))
				break
			}
		}
	}
}

func TestParseRejectsMalformedInput(t *testing.T) {
	cases := []struct {
		client bool
		in     string
		want   error
	}{
		// Numbers.
		{false, "MSG foo 18446744073709551616 0\r\n", ErrSize}, // SID one past uint64
		{false, "MSG foo 184467440737095516150 0\r\n", ErrSize},
		{false, "MSG foo 1 1e3\r\n", ErrSize},
		{false, "MSG foo 1 0x10\r\n", ErrSize},
		{false, "MSG foo 1 ３\r\n", ErrSize}, // non-ASCII digit
		{false, "MSG foo 1 3\x00\r\n", ErrSize},
		{false, "MSG foo 1 0000000000000000000003\r\n", ErrSize}, // too many digits
		{false, "HMSG foo 1 12 +14\r\n", ErrSize},
		{false, "HMSG foo 1 -12 14\r\n", ErrSize},
		{false, "HMSG foo x 12 14\r\n", ErrSize},
		{false, "HMSG foo 1 r 12 -14\r\n", ErrSize},
		// Sizes against limits.
		{false, "HMSG foo 1 12 2097152\r\n", ErrPayloadTooLarge},
		{false, "HMSG foo 1 2097152 2097152\r\n", ErrPayloadTooLarge},
		{false, "HMSG foo 1 r 12 2097152\r\n", ErrPayloadTooLarge},
		{false, "MSG foo 1 r 1048577\r\n", ErrPayloadTooLarge},
		{false, "HMSG foo 1 11 11\r\n", ErrHeaderSize},
		{false, "HMSG foo 1 1 100\r\n", ErrHeaderSize},
		{false, "HMSG foo 1 reply 20 10\r\n", ErrHeaderSize},
		{false, "HMSG foo 1 13 12\r\n", ErrHeaderSize},
		// Argument counts.
		{false, "MSG foo 1 \r\n", ErrArgs}, // empty size
		{false, "MSG foo\r\n", ErrArgs},
		{false, "MSG foo 1 r 3 4\r\n", ErrArgs},
		{false, "HMSG foo 1 r 12 14 x\r\n", ErrArgs},
		{false, "HMSG \t \r\n", ErrArgs},
		{false, "MSG\n", ErrArgs},
		{false, "INFO\r\n", ErrArgs},
		{false, "INFO \t \r\n", ErrArgs},
		{false, "PING\rX\r\n", ErrArgs},
		{false, "PONG x\r\n", ErrArgs},
		{false, "+OK junk\r\n", ErrArgs},
		// Payload terminators.
		{false, "MSG foo 1 3\r\nabcd\r\n", ErrMissingCRLF},
		{false, "MSG foo 1 3\r\nabc\r\r", ErrMissingCRLF},
		{false, "MSG foo 1 3\r\nab\r\n", ErrMissingCRLF},
		{false, "MSG foo 1 0\r\n\n", ErrMissingCRLF},
		{false, "HMSG foo 1 12 12\r\nNATS/1.0\r\n\r\nX\r\n", ErrMissingCRLF},
		// Names.
		{false, "ZOO\r\n", ErrUnknownOp},
		{false, "PIN\r\n", ErrUnknownOp},
		{false, "PINGPONG\r\n", ErrUnknownOp},
		{false, "MS\r\n", ErrUnknownOp},
		{false, "HMS G\r\n", ErrUnknownOp},
		{false, "\tPING\r\n", ErrUnknownOp},
		{false, "\nPING\r\n", ErrUnknownOp},
		{false, "\x00", ErrUnknownOp},
		{false, "SUB foo 1\r\n", ErrUnknownOp}, // client ops on the server side
		{false, "CONNECT {}\r\n", ErrUnknownOp},
		{false, "HPUB foo 12 12\r\n", ErrUnknownOp},
		{false, "UNSUB 1\r\n", ErrUnknownOp},
		{true, "INFO {}\r\n", ErrUnknownOp}, // server ops on the client side
		{true, "HMSG foo 1 12 12\r\n", ErrUnknownOp},
		{true, "+OK\r\n", ErrUnknownOp},
		{true, "-ERR 'x'\r\n", ErrUnknownOp},
		{true, "PUBX a 0\r\n", ErrUnknownOp},
		// Client side arguments.
		{true, "PUB foo\r\n", ErrArgs},
		{true, "PUB foo r 3 x\r\n", ErrArgs},
		{true, "PUB foo -3\r\n", ErrSize},
		{true, "PUB foo 2097152\r\n", ErrPayloadTooLarge},
		{true, "PUB foo 3\r\nabcd", ErrMissingCRLF},
		{true, "HPUB foo 13 12\r\n", ErrHeaderSize},
		{true, "HPUB foo 12\r\n", ErrArgs},
		{true, "SUB foo\r\n", ErrArgs},
		{true, "SUB foo q 1 x\r\n", ErrArgs},
		{true, "SUB foo q x\r\n", ErrSize},
		{true, "UNSUB\r\n", ErrArgs},
		{true, "UNSUB 1 2 3\r\n", ErrArgs},
		{true, "UNSUB x\r\n", ErrSize},
		{true, "UNSUB 1 -1\r\n", ErrSize},
		{true, "UNSUB 1 18446744073709551616\r\n", ErrSize},
		{true, "CONNECT \r\n", ErrArgs},
		{true, "CONNECT {" + strings.Repeat(" ", 1<<20), ErrControlLine},
		{true, "SUB " + strings.Repeat("a", 5000) + " 1\r\n", ErrControlLine},
	}
	for _, c := range cases {
		all := [][][]byte{{[]byte(c.in)}, {[]byte(c.in[:len(c.in)/2]), []byte(c.in[len(c.in)/2:])}}
		if len(c.in) <= 64 {
			all = splits(c.in)
		}
		for _, chunks := range all {
			p := Parser{ClientOps: c.client}
			p.Limits.MaxPayload = 1 << 20
			_, err := parseChunks(&p, chunks...)
			var pe *Error
			if !errors.Is(err, c.want) || !errors.As(err, &pe) {
				t.Errorf("%s in %d chunks (client %v): got %v, want %v", Excerpt([]byte(c.in)), len(chunks), c.client, err, c.want)
				break
			}
			// The parser starts over cleanly with the next chunk.
			op := "PING\r\n"
			got, err := parseChunks(&p, []byte(op))
			if err != nil || len(got) != 1 || got[0] != "PING" {
				t.Errorf("%s: after error got %q, %v", Excerpt([]byte(c.in)), got, err)
				break
			}
		}
	}
}

// TestParseLongLinesInPieces feeds long control lines in many small chunks,
// so the scratch buffer, not the chunk, holds the line.
func TestParseLongLinesInPieces(t *testing.T) {
	cases := []struct {
		in   string
		want error
	}{
		{"MSG " + strings.Repeat("a", 64<<10), ErrControlLine}, // 64 KiB, no CRLF
		{"HMSG " + strings.Repeat("a", 64<<10), ErrControlLine},
		{"MSG " + strings.Repeat("s", 4200) + " 1 0\r\n\r\n", ErrControlLine},
		{"INFO {" + strings.Repeat(" ", 1<<20) + "}\r\n", ErrControlLine},
		{"MSG " + strings.Repeat("s", 4000) + " 1 0\r\n\r\n", nil},
		{"INFO {" + strings.Repeat(" ", 1000<<10) + "}\r\n", nil},
	}
	for _, c := range cases {
		for _, n := range []int{1000, 4093} {
			var p Parser
			ops, err := parseScribble(&p, chunked(c.in, n)...)
			if !errors.Is(err, c.want) {
				t.Errorf("%s in %d-byte chunks: err %v, want %v", Excerpt([]byte(c.in)), n, err, c.want)
				continue
			}
			if c.want == nil && len(ops) != 1 {
				t.Errorf("%s in %d-byte chunks: ops %d", Excerpt([]byte(c.in)), n, len(ops))
			}
			if cap(p.line) > scratchKeep {
				t.Errorf("%s: scratch of %d bytes kept after the op", Excerpt([]byte(c.in)), cap(p.line))
			}
		}
	}
	// A long subject split across chunks comes out whole.
	subj := strings.Repeat("abcdefgh.", 400) + "z"
	var p Parser
	ops, err := parseScribble(&p, chunked("MSG "+subj+" 5 r.1 2\r\nhi\r\n", 1000)...)
	want := fmt.Sprintf(`MSG %q 5 "r.1" "" "hi"`, subj)
	if err != nil || len(ops) != 1 || ops[0] != want {
		t.Fatalf("long subject: %v %v", ops, err)
	}
}

// TestParseControlLineLimit checks the two ends of MaxControlLine on which
// the documentation and the parser agree: a line of exactly the limit is
// accepted, and one whose arguments alone exceed it is refused.
func TestParseControlLineLimit(t *testing.T) {
	cases := []struct {
		line string // without CRLF
		ok   bool
	}{
		{"MSG abcdefgh 1 0", true},        // 16 bytes
		{"MSG abcdefghijklmn 1 0", false}, // 18 bytes of arguments
		{"MSG a 1 0" + strings.Repeat(" ", 20), false},
	}
	for _, c := range cases {
		for _, chunks := range splits(c.line + "\r\n\r\n") {
			p := Parser{Limits: Limits{MaxControlLine: 16}}
			_, err := parseChunks(&p, chunks...)
			if c.ok != (err == nil) || (err != nil && !errors.Is(err, ErrControlLine)) {
				t.Errorf("%q (%d bytes) in %d chunks: %v, want ok=%v", c.line, len(c.line), len(chunks), err, c.ok)
				break
			}
		}
	}
}

func TestParseErrorOffsetAndExcerpt(t *testing.T) {
	cases := []struct {
		chunks []string
		offset int64
		near   string
	}{
		{[]string{"ZOO\r\n"}, 0, `"ZOO\r\n"`},
		{[]string{"PING\r\nZOO\r\n"}, 6, `"ZOO\r\n"`},
		{[]string{"PI", "NG\r\n", "PONG\r\nZ"}, 12, `"Z"`},
		{[]string{"PING\r\n\x1b[2J\r\n"}, 6, `"\x1b[2J\r\n"`},
		{[]string{"MSG a 1 3\r\nabcXY"}, 14, `"XY"`},
		{[]string{"PING\r\nMSG a 1 3\r\nab", "cXY"}, 20, `"XY"`},
	}
	for _, c := range cases {
		var p Parser
		var chunks [][]byte
		for _, s := range c.chunks {
			chunks = append(chunks, []byte(s))
		}
		_, err := parseChunks(&p, chunks...)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: %v is not a *Error", c.chunks, err)
			continue
		}
		if pe.Offset != c.offset || pe.Near != c.near {
			t.Errorf("%q: offset %d near %s, want %d near %s", c.chunks, pe.Offset, pe.Near, c.offset, c.near)
		}
		if !strings.Contains(pe.Error(), fmt.Sprint(" at byte ", c.offset)) || strings.ContainsAny(pe.Error(), "\r\n\x1b") {
			t.Errorf("%q: message %q", c.chunks, pe.Error())
		}
	}
	// Long excerpts are cut.
	_, err := parseChunks(new(Parser), []byte("Z"+strings.Repeat("x", 1000)))
	var pe *Error
	if !errors.As(err, &pe) || len(pe.Near) > 64 {
		t.Errorf("long excerpt: %v", err)
	}
}

func TestParseDropsChunkAfterError(t *testing.T) {
	var p Parser
	p.Feed([]byte("ZOO\r\nPING\r\n"))
	if _, err := p.Next(); !errors.Is(err, ErrUnknownOp) {
		t.Fatalf("err %v", err)
	}
	if op, err := p.Next(); op != nil || err != nil {
		t.Fatalf("after error, rest of chunk not dropped: %v %v", op, err)
	}
	if p.Buffered() {
		t.Fatalf("after error, parser mid-op")
	}
	// Reset starts a new stream: offsets count from zero again.
	p.Reset()
	if got, err := parseChunks(&p, []byte("PING\r\n")); err != nil || len(got) != 1 || p.Offset() != 6 {
		t.Fatalf("after Reset: %v %v offset %d", got, err, p.Offset())
	}
}

func TestParseBufferedAndOffset(t *testing.T) {
	in := "PING\r\nMSG a 1 2\r\nhi\r\n"
	var p Parser
	for i := range len(in) {
		p.Feed([]byte{in[i]})
		for {
			op, err := p.Next()
			if err != nil {
				t.Fatal(err)
			}
			if op == nil {
				break
			}
		}
		if p.Offset() != int64(i+1) {
			t.Fatalf("after byte %d: offset %d", i, p.Offset())
		}
		atBoundary := i == 5 || i == len(in)-1
		if p.Buffered() == atBoundary {
			t.Fatalf("after byte %d (%q): Buffered %v", i, in[:i+1], p.Buffered())
		}
	}
}

func TestParseLimitsChangeBetweenOps(t *testing.T) {
	p := Parser{Limits: Limits{MaxPayload: 4}}
	p.Feed([]byte("MSG a 1 4\r\nabcd\r\nMSG a 1 8\r\nabcdefgh\r\n"))
	if op, err := p.Next(); err != nil || op == nil {
		t.Fatalf("first: %v %v", op, err)
	}
	p.Limits.MaxPayload = 8 // as when INFO raises max_payload
	if op, err := p.Next(); err != nil || op == nil || string(op.Payload) != "abcdefgh" {
		t.Fatalf("second: %v %v", op, err)
	}
}

func TestParseZeroCopyAndAlloc(t *testing.T) {
	var calls []int
	p := Parser{Alloc: func(n int) []byte { calls = append(calls, n); return make([]byte, n) }}

	// In one chunk: views into the chunk, nothing allocated.
	in := []byte("HMSG s 1 r 12 14\r\nNATS/1.0\r\n\r\nhi\r\n")
	p.Feed(in)
	op, err := p.Next()
	if err != nil || op == nil {
		t.Fatalf("%v %v", op, err)
	}
	if op.Owned || len(calls) != 0 {
		t.Fatalf("in-chunk op: owned %v, alloc calls %v", op.Owned, calls)
	}
	if &op.Subject[0] != &in[5] || &op.Header[0] != &in[18] || &op.Payload[0] != &in[30] {
		t.Fatalf("in-chunk op does not view the chunk")
	}
	if op.Size() != 14 {
		t.Fatalf("Size %d", op.Size())
	}

	// Spanning: one Alloc of header plus payload, Owned.
	for cut := 18; cut < len(in); cut++ { // 18: end of the control line
		calls = calls[:0]
		got, err := parseScribble(&p, in[:cut], in[cut:])
		if err != nil || len(got) != 1 {
			t.Fatalf("cut %d: %v %v", cut, got, err)
		}
		// Cut right after the control line, the message is wholly in the
		// second chunk: no copy. Any later cut (even one that leaves only
		// the CRLF behind) copies header and payload once.
		want := []int{14}
		if cut == 18 {
			want = nil
		}
		if !slices.Equal(calls, want) {
			t.Fatalf("cut %d: alloc calls %v, want %v", cut, calls, want)
		}
	}

	// An empty message spanning chunks allocates nothing.
	calls = calls[:0]
	if got, err := parseScribble(&p, []byte("MSG a 1 0\r\n\r"), []byte("\n")); err != nil || len(got) != 1 || len(calls) != 0 {
		t.Fatalf("empty spanning: %v %v calls %v", got, err, calls)
	}

	// An Alloc that returns too little is not trusted.
	p.Alloc = func(n int) []byte { return nil }
	got, err := parseScribble(&p, []byte("MSG a 1 5\r\nhe"), []byte("llo\r\n"))
	if err != nil || len(got) != 1 || got[0] != `MSG "a" 1 "" "" "hello"` {
		t.Fatalf("short Alloc: %v %v", got, err)
	}
}

// TestParseViewsSurviveChunkReuse splits messages into three chunks at every
// pair of positions and overwrites each chunk once consumed: the op must not
// refer to an overwritten chunk.
func TestParseViewsSurviveChunkReuse(t *testing.T) {
	for _, in := range []string{
		"HMSG sub.j 9 rep.ly 16 21\r\nNATS/1.0 503\r\n\r\nhello\r\n",
		"MSG sub.j 9 rep.ly 5\r\nhello\r\n",
	} {
		var p Parser
		want, err := parseChunks(&p, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(in); i++ {
			for j := i; j < len(in); j++ {
				got, err := parseScribble(&p, []byte(in[:i]), []byte(in[i:j]), []byte(in[j:]))
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("%q cut at %d,%d: got %q %v, want %q", in, i, j, got, err, want)
				}
			}
		}
	}
}

// TestParseViewsAfterControlLineAtChunkEnd: a chunk that ends right after a
// message's control line may be reused by the caller; Subject and Reply must
// not view it.
func TestParseViewsAfterControlLineAtChunkEnd(t *testing.T) {
	cases := []struct {
		client   bool
		ctl, msg string
		want     string
	}{
		{false, "MSG foo 1 r.1 3\r\n", "abc\r\n", `MSG "foo" 1 "r.1" "" "abc"`},
		{false, "HMSG foo 1 r.1 12 12\r\n", "NATS/1.0\r\n\r\n\r\n", `HMSG "foo" 1 "r.1" "NATS/1.0\r\n\r\n" ""`},
		{true, "PUB foo r.1 3\r\n", "abc\r\n", `PUB "foo" 0 "r.1" "" "abc"`},
	}
	for _, c := range cases {
		p := Parser{ClientOps: c.client}
		chunk := []byte(c.ctl)
		p.Feed(chunk)
		if op, err := p.Next(); op != nil || err != nil {
			t.Fatalf("%q: early %v %v", c.ctl, op, err)
		}
		for i := range chunk { // the chunk is consumed: the caller reuses it
			chunk[i] = 'X'
		}
		p.Feed([]byte(c.msg))
		op, err := p.Next()
		if err != nil || op == nil || opString(op) != c.want {
			got := ""
			if op != nil {
				got = opString(op)
			}
			t.Errorf("%q + %q: got %s %v, want %s", c.ctl, c.msg, got, err, c.want)
		}
	}
}

// TestParseArgumentLineEveryAlignment parses MSG lines whose fields,
// separators (runs of spaces and tabs) and line end fall at every offset of
// the 8-byte words scanned at once, whole and split in two at every byte,
// and checks them against the same line built field by field.
func TestParseArgumentLineEveryAlignment(t *testing.T) {
	seps := []string{" ", "\t", "  ", " \t ", "\t\t\t\t\t\t\t\t\t"}
	for n := 1; n <= 19; n++ {
		subject := strings.Repeat("s", n)
		for _, sep := range seps {
			for _, reply := range []string{"", "r.x" + strings.Repeat("y", n%9)} {
				line := "MSG" + sep + subject + sep + "7"
				want := fmt.Sprintf("MSG %q 7 %q \"\" \"ab\"", subject, reply)
				if reply != "" {
					line += sep + reply
				}
				in := line + sep + "2\r\nab\r\n"
				for _, chunks := range splits(in) {
					var p Parser
					got, err := parseScribble(&p, chunks...)
					if err != nil || len(got) != 1 || got[0] != want {
						t.Fatalf("%q in %d chunks: %q, %v; want %q", in, len(chunks), got, err, want)
					}
				}
			}
		}
	}
	// A '\r' inside the line is part of a field, not its end.
	var p Parser
	got, err := parseScribble(&p, []byte("MSG a\rb 7 2\r\nab\r\n"))
	if err != nil || len(got) != 1 || !strings.HasPrefix(got[0], `MSG "a\rb" 7`) {
		t.Fatalf("inner CR: %q, %v", got, err)
	}
}
