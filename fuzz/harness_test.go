package fuzz

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"testing"
	"unsafe"

	"github.com/natsio/natsio/proto"
)

// fuzzLimits are small enough that the fuzzer reaches every limit check.
var fuzzLimits = proto.Limits{MaxControlLine: 256, MaxPayload: 4096, MaxInfoLine: 8192}

// tinyLimits put the limits within a few bytes of typical frames.
var tinyLimits = proto.Limits{MaxControlLine: 16, MaxPayload: 16, MaxInfoLine: 32}

// sentinels are the parser's sentinel errors, with the names outcomes use.
var sentinels = []struct {
	name string
	err  error
}{
	{"ErrUnknownOp", proto.ErrUnknownOp},
	{"ErrControlLine", proto.ErrControlLine},
	{"ErrArgs", proto.ErrArgs},
	{"ErrSize", proto.ErrSize},
	{"ErrPayloadTooLarge", proto.ErrPayloadTooLarge},
	{"ErrHeaderSize", proto.ErrHeaderSize},
	{"ErrMissingCRLF", proto.ErrMissingCRLF},
}

// render writes every field of op that the parser sets into one canonical
// line. Owned is left out: it depends on how the stream was chunked.
func render(op *proto.Op) string { return string(appendOp(nil, op)) }

// appendOp appends render's line to b without allocating.
func appendOp(b []byte, op *proto.Op) []byte {
	b = append(b, op.Kind.String()...)
	b = appendQuoted(append(b, " subject="...), op.Subject)
	b = appendQuoted(append(b, " reply="...), op.Reply)
	b = appendQuoted(append(b, " queue="...), op.Queue)
	b = strconv.AppendUint(append(b, " sid="...), op.SID, 10)
	b = strconv.AppendUint(append(b, " max="...), op.Max, 10)
	b = appendQuoted(append(b, " header="...), op.Header)
	b = appendQuoted(append(b, " payload="...), op.Payload)
	return appendQuoted(append(b, " text="...), op.Text)
}

// appendQuoted appends v in double quotes, printable ASCII as is and every
// other byte, '"' and '\\' as \xNN. A field longer than quoteMax is cut
// after its first quoteMax/2 bytes and summed up by its length and CRC-32,
// which keeps comparing long payloads at every split point cheap.
func appendQuoted(b, v []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	whole := v
	if len(v) > quoteMax {
		v = v[:quoteMax/2]
	}
	for _, c := range v {
		if c < ' ' || c > '~' || c == '"' || c == '\\' {
			b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	b = append(b, '"')
	if len(whole) > quoteMax {
		b = strconv.AppendInt(append(b, "...(len "...), int64(len(whole)), 10)
		b = strconv.AppendUint(append(b, " crc "...), uint64(crc32.ChecksumIEEE(whole)), 16)
		b = append(b, ')')
	}
	return b
}

// quoteMax is the longest field appendQuoted writes out in full.
const quoteMax = 64

// outcome is what a parser made of a stream: the ops up to the first error
// (rendered, one line each), the error's sentinel name, and whether the
// stream ended inside an op.
type outcome struct {
	ops      []byte
	err      string
	buffered bool
	// ends[k] is the stream offset just past op k, rendered[k] the length
	// of ops up to and including op k.
	ends     []int
	rendered []int
}

// window returns the part of o that ops a to b-1 make up; with tail, b is
// len(o.ends) and the window ends like o (error, buffered).
func (o outcome) window(a, b int, tail bool) outcome {
	from := 0
	if a > 0 {
		from = o.rendered[a-1]
	}
	to := 0
	if b > 0 {
		to = o.rendered[b-1]
	}
	w := outcome{ops: o.ops[from:to]}
	if tail {
		w.ops = o.ops[from:]
		w.err, w.buffered = o.err, o.buffered
	}
	return w
}

func (o *outcome) add(op *proto.Op) { o.ops = append(appendOp(o.ops, op), '\n') }

func (o outcome) String() string {
	if o.err != "" {
		return string(o.ops) + "error " + o.err
	}
	return fmt.Sprintf("%send buffered=%v", o.ops, o.buffered)
}

func (o outcome) equal(p outcome) bool {
	return o.err == p.err && bytes.Equal(o.ops, p.ops) && (o.err != "" || o.buffered == p.buffered)
}

// clone returns a copy of b that the caller may overwrite.
func clone(b []byte) []byte { return append([]byte(nil), b...) }

// wholeChunk, bytewise and irregular cut a stream into chunks, each a
// fresh copy that parse overwrites once the parser has consumed it.
func wholeChunk(in []byte) [][]byte { return [][]byte{clone(in)} }

func bytewise(in []byte) [][]byte {
	buf := clone(in)
	chunks := make([][]byte, len(in))
	for i := range chunks {
		chunks[i] = buf[i : i+1 : i+1]
	}
	return chunks
}

// irregularSizes are the chunk sizes irregular cycles through, including
// empty chunks.
var irregularSizes = [...]int{3, 0, 1, 7, 2, 0, 13, 5, 31, 1, 64}

func irregular(in []byte) [][]byte {
	buf := clone(in)
	var chunks [][]byte
	for k := 0; len(buf) > 0; k++ {
		n := min(irregularSizes[k%len(irregularSizes)], len(buf))
		chunks = append(chunks, buf[:n:n])
		buf = buf[n:]
	}
	return chunks
}

// parse feeds chunks to p, collects the rendered ops up to the first error
// and checks the contracts of Parser, Op and Error along the way. Once the
// parser has consumed a chunk (Next returned nil, nil), parse overwrites
// it, as a connection reusing its read buffer would, so an op that still
// viewed an earlier chunk would render differently.
func parse(t testing.TB, p *proto.Parser, chunks [][]byte) outcome {
	return parseBuf(t, p, chunks, nil)
}

// parseBuf is parse rendering the ops into buf[:0].
func parseBuf(t testing.TB, p *proto.Parser, chunks [][]byte, buf []byte) outcome {
	out := outcome{ops: buf[:0]}
	allocs := 0     // Alloc calls since the last op
	allocSize := -1 // size asked by the last Alloc call
	p.Alloc = func(n int) []byte {
		allocs++
		allocSize = n
		return bytes.Repeat([]byte{0xA5}, n) // garbage until the parser fills it
	}
	type kept struct {
		body, want []byte // Owned memory and a copy of what it held
	}
	var owned []kept
	fed := 0
	for _, c := range chunks {
		p.Feed(c)
		fed += len(c)
		for {
			op, err := p.Next()
			if err != nil {
				if op != nil {
					t.Fatalf("Next returned an op and an error %v", err)
				}
				out.err = checkError(t, err, fed)
				checkRecovery(t, p)
				return out
			}
			if op == nil {
				break
			}
			checkOp(t, p, op)
			switch {
			case op.Owned && (allocs != 1 || allocSize != op.Size()):
				t.Fatalf("owned op of %d bytes after %d allocs (last of %d)", op.Size(), allocs, allocSize)
			case !op.Owned && allocs != 0:
				t.Fatalf("op not owned after %d allocs", allocs)
			}
			allocs, allocSize = 0, -1
			if op.Owned {
				owned = append(owned, kept{op.Body, clone(op.Body)})
			}
			out.add(op)
			out.ends = append(out.ends, int(p.Offset()))
			out.rendered = append(out.rendered, len(out.ops))
		}
		overwrite(c)
	}
	out.buffered = p.Buffered()
	if got := p.Offset(); got != int64(fed) {
		t.Fatalf("Offset %d after consuming %d bytes", got, fed)
	}
	for _, k := range owned {
		if !bytes.Equal(k.body, k.want) {
			t.Fatalf("owned memory changed after the op was returned: %q, was %q", k.body, k.want)
		}
	}
	return out
}

// checkError checks that err is a *proto.Error matching exactly one parser
// sentinel, at a plausible offset, printable in a log line; it returns the
// sentinel's name.
func checkError(t testing.TB, err error, fed int) string {
	pe, ok := err.(*proto.Error)
	if !ok {
		t.Fatalf("error %T %v is not a *proto.Error", err, err)
	}
	name := ""
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			if name != "" {
				t.Fatalf("error %v matches %s and %s", err, name, s.name)
			}
			if pe.Err != s.err {
				t.Fatalf("Error.Err %v is not the sentinel itself", pe.Err)
			}
			name = s.name
		}
	}
	if name == "" {
		t.Fatalf("error %v matches no parser sentinel", err)
	}
	if pe.Offset < 0 || pe.Offset > int64(fed) {
		t.Fatalf("error offset %d outside the %d bytes fed", pe.Offset, fed)
	}
	if len(pe.Near) > 200 {
		t.Fatalf("error excerpt of %d bytes", len(pe.Near))
	}
	for _, r := range err.Error() {
		if r < ' ' || r == 0x7f {
			t.Fatalf("error text holds control character %U: %q", r, err.Error())
		}
	}
	return name
}

// checkRecovery checks that after an error the parser dropped the rest of
// the chunk and parses a new stream from the next chunk.
func checkRecovery(t testing.TB, p *proto.Parser) {
	t.Helper()
	if op, err := p.Next(); op != nil || err != nil {
		t.Fatalf("after an error Next returned %v, %v; want the chunk dropped", op, err)
	}
	if p.Buffered() {
		t.Fatal("parser still mid-op after an error")
	}
	p.Feed([]byte("PING\r\n"))
	op, err := p.Next()
	if err != nil || op == nil || op.Kind != proto.KindPing {
		t.Fatalf("after an error PING gave %v, %v", op, err)
	}
	if op, err := p.Next(); op != nil || err != nil {
		t.Fatalf("after PING: %v, %v", op, err)
	}
}

// serverKinds and clientKinds are the ops each side's parser yields.
var (
	serverKinds = map[proto.Kind]bool{proto.KindInfo: true, proto.KindMsg: true, proto.KindHMsg: true,
		proto.KindPing: true, proto.KindPong: true, proto.KindOK: true, proto.KindErr: true}
	clientKinds = map[proto.Kind]bool{proto.KindConnect: true, proto.KindPub: true, proto.KindHPub: true,
		proto.KindSub: true, proto.KindUnsub: true, proto.KindPing: true, proto.KindPong: true}
)

// checkOp checks an op against the Op documentation and p's Limits.
func checkOp(t testing.TB, p *proto.Parser, op *proto.Op) {
	if (p.ClientOps && !clientKinds[op.Kind]) || (!p.ClientOps && !serverKinds[op.Kind]) {
		t.Fatalf("op %v on the wrong side (ClientOps %v)", op.Kind, p.ClientOps)
	}
	for _, f := range [][]byte{op.Subject, op.Reply, op.Queue} {
		if bytes.ContainsAny(f, " \t\n") {
			t.Fatalf("argument %q holds a blank: %s", f, render(op))
		}
	}
	switch op.Kind {
	case proto.KindMsg, proto.KindHMsg, proto.KindPub, proto.KindHPub:
		if len(op.Subject) == 0 {
			t.Fatalf("message without subject: %s", render(op))
		}
		max := p.Limits.MaxPayload
		if max <= 0 {
			max = proto.DefaultMaxPayload
		}
		if op.Size() > max {
			t.Fatalf("message of %d bytes over MaxPayload %d", op.Size(), max)
		}
	}
	switch op.Kind {
	case proto.KindMsg, proto.KindPub:
		if op.Header != nil {
			t.Fatalf("header on %v", op.Kind)
		}
	case proto.KindHMsg, proto.KindHPub:
		if n := len(op.Header); n != 0 && n < len("NATS/1.0\r\n\r\n") {
			t.Fatalf("header block of %d bytes", n)
		}
	}
	// Body is the header block followed by the payload, as one slice:
	// Header and Payload are its two parts, in place.
	switch op.Kind {
	case proto.KindMsg, proto.KindHMsg, proto.KindPub, proto.KindHPub:
		h := len(op.Header)
		if len(op.Body) != h+len(op.Payload) ||
			!sameMemory(op.Header, op.Body[:h]) || !sameMemory(op.Payload, op.Body[h:]) {
			t.Fatalf("Body %q is not Header and Payload in place: %s", op.Body, render(op))
		}
	default:
		if op.Body != nil || op.Header != nil || op.Payload != nil {
			t.Fatalf("message bytes on %s", render(op))
		}
	}
}

// sameMemory reports whether a and b are the same bytes in memory (any two
// empty slices are).
func sameMemory(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b))
}

// overwrite fills a consumed chunk with '~', as a connection reusing its
// read buffer would.
func overwrite(c []byte) {
	for len(c) > 0 {
		c = c[copy(c, tildes[:]):]
	}
}

var tildes = [4096]byte(bytes.Repeat([]byte{'~'}, 4096))
