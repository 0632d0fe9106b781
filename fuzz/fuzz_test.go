package fuzz

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/natsio/natsio/proto"
)

// maxSplitInput bounds the inputs FuzzParserSplits splits at every byte
// boundary; that loop costs up to len(input)² (one op filling the input).
const maxSplitInput = 2 << 10

// maxInput bounds the part of an input the parser targets look at at all.
const maxInput = 64 << 10

// FuzzParserSplits requires that how a stream is cut into chunks changes
// nothing: the ops, the error kind and whether the stream ended inside an
// op are the same for the whole input, every two-way split, one byte at a
// time and irregular chunks, on the server side and the client side.
func FuzzParserSplits(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > maxInput {
			in = in[:maxInput]
		}
		for _, client := range []bool{false, true} {
			for _, lim := range []proto.Limits{fuzzLimits, tinyLimits} {
				checkSplits(t, in, client, lim)
			}
		}
	})
}

func checkSplits(t *testing.T, in []byte, client bool, lim proto.Limits) {
	p := &proto.Parser{Limits: lim, ClientOps: client}
	want := parse(t, p, wholeChunk(in))
	var buf []byte
	check := func(how func() string, chunks [][]byte) {
		p.Reset() // a reused parser behaves like a new one
		got := parseBuf(t, p, chunks, buf)
		if !got.equal(want) {
			t.Fatalf("ClientOps=%v, %+v, input %q\nfed %s:\n%s\nfed whole:\n%s", client, lim, in, how(), got, want)
		}
		buf = got.ops
	}
	check(func() string { return "byte by byte" }, bytewise(in))
	check(func() string { return "in irregular chunks" }, irregular(in))
	if len(in) > maxSplitInput {
		return
	}
	// Every two-way split. After an op the parser is back at the start
	// with nothing kept, exactly as in the whole run, so each split only
	// feeds the op that ends at or before it and the one that ends after
	// it: the first chunk starts at an op boundary, the second stops at
	// one. The loop costs len(input) × op length rather than len(input)².
	ends := want.ends
	work := make([]byte, len(in))
	var chunks [2][]byte
	j := 0 // ops [0, j) end at or before the split
	for i := 1; i < len(in); i++ {
		for j < len(ends) && ends[j] <= i {
			j++
		}
		a := max(j-1, 0)
		start := 0
		if a > 0 {
			start = ends[a-1]
		}
		end, b, tail := len(in), len(ends), true
		if j < len(ends) {
			end, b, tail = ends[j], j+1, false
		}
		wantHere := want.window(a, b, tail)
		copy(work, in)
		chunks[0], chunks[1] = work[start:i:i], work[i:end]
		p.Reset()
		got := parseBuf(t, p, chunks[:], buf)
		if !got.equal(wantHere) {
			t.Fatalf("ClientOps=%v, %+v, input %q\nfed %d:%d and %d:%d:\n%s\nwant (from the whole run):\n%s", client, lim, in, start, i, i, end, got, wantHere)
		}
		buf = got.ops
	}
}

// FuzzParserDifferential compares proto.Parser with refParse, whole and
// byte by byte, on both sides and with two sets of limits.
func FuzzParserDifferential(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > maxInput {
			in = in[:maxInput]
		}
		for _, client := range []bool{false, true} {
			for _, lim := range []proto.Limits{fuzzLimits, tinyLimits} {
				want := refParse(in, client, lim)
				got := parse(t, &proto.Parser{Limits: lim, ClientOps: client}, wholeChunk(in))
				if !got.equal(want) {
					t.Fatalf("ClientOps=%v, %+v, input %q\nproto:\n%s\nreference:\n%s", client, lim, in, got, want)
				}
				got = parse(t, &proto.Parser{Limits: lim, ClientOps: client}, bytewise(in))
				if !got.equal(want) {
					t.Fatalf("ClientOps=%v, %+v, input %q byte by byte\nproto:\n%s\nreference:\n%s", client, lim, in, got, want)
				}
			}
		}
	})
}

// roundTripLimits let encoded frames of any fuzzed size through.
var roundTripLimits = proto.Limits{MaxControlLine: 1 << 20, MaxInfoLine: 1 << 20}

// FuzzEncodeRoundTrip encodes fuzzed arguments with every encoder. A
// rejection must leave dst alone and agree with the validators and with
// reference validators; an accepted frame must parse back, whole and byte
// by byte, to exactly the arguments.
func FuzzEncodeRoundTrip(f *testing.F) {
	f.Fuzz(func(t *testing.T, subject, reply, queue, hkey, hval string, raw, payload []byte, sid, max uint64) {
		checkValidators(t, subject, reply, queue)
		pubOK := refValidSubject(subject, false) && (reply == "" || refValidSubject(reply, false))
		pubErr := errIf(!pubOK, proto.ErrBadSubject)

		// The header: hkey with each ';'-separated part of hval, or none.
		var h *proto.Header
		var fields [][2]string
		hdrOK := true
		if hkey != "" {
			h = &proto.Header{}
			hdrOK = refValidKey(hkey)
			for v := range strings.SplitSeq(hval, ";") {
				h.Add(hkey, v)
				fields = append(fields, [2]string{hkey, v})
				hdrOK = hdrOK && refValidValue(v)
			}
		}
		if err := h.Validate(); (err == nil) != hdrOK || (err != nil && !errors.Is(err, proto.ErrBadHeader)) {
			t.Fatalf("Header %q Validate: %v, want valid=%v", fields, err, hdrOK)
		}
		rawOK := len(raw) > 0 && refValidBlock(raw)

		// PUB
		dst := newDst()
		b, err := proto.AppendPub(dst, subject, reply, payload)
		if checkEncoded(t, "AppendPub", dst, b, err, pubErr) {
			want := proto.Op{Kind: proto.KindPub, Subject: []byte(subject), Reply: []byte(reply), Payload: payload}
			checkParsedBack(t, true, b[len(dst):], render(&want))
		}

		// HPUB with a Header
		dst = newDst()
		b, err = proto.AppendHPub(dst, subject, reply, h, payload)
		wantErr := pubErr
		if wantErr == nil && !hdrOK {
			wantErr = proto.ErrBadHeader
		}
		if checkEncoded(t, "AppendHPub", dst, b, err, wantErr) {
			block := refHeaderBlock(fields)
			if len(block) != h.EncodedLen() {
				t.Fatalf("EncodedLen %d, block %q", h.EncodedLen(), block)
			}
			want := proto.Op{Kind: proto.KindHPub, Subject: []byte(subject), Reply: []byte(reply),
				Header: []byte(block), Payload: payload}
			op := checkParsedBack(t, true, b[len(dst):], render(&want))
			checkHeaderFields(t, proto.RawHeader(op.Header), fields, hkey)
		}

		// HPUB with a raw block
		dst = newDst()
		b, err = proto.AppendHPubRaw(dst, subject, reply, proto.RawHeader(raw), payload)
		wantErr = pubErr
		if wantErr == nil && !rawOK {
			wantErr = proto.ErrBadHeader
		}
		if checkEncoded(t, "AppendHPubRaw", dst, b, err, wantErr) {
			want := proto.Op{Kind: proto.KindHPub, Subject: []byte(subject), Reply: []byte(reply),
				Header: raw, Payload: payload}
			checkParsedBack(t, true, b[len(dst):], render(&want))
		}

		// SUB
		dst = newDst()
		b, err = proto.AppendSub(dst, subject, queue, sid)
		wantErr = nil
		switch {
		case !refValidSubject(subject, true):
			wantErr = proto.ErrBadSubject
		case queue != "" && !refValidQueue(queue):
			wantErr = proto.ErrBadQueue
		}
		if checkEncoded(t, "AppendSub", dst, b, err, wantErr) {
			want := proto.Op{Kind: proto.KindSub, Subject: []byte(subject), Queue: []byte(queue), SID: sid}
			checkParsedBack(t, true, b[len(dst):], render(&want))
		}

		// UNSUB, PING, PONG: no arguments to reject.
		dst = newDst()
		want := proto.Op{Kind: proto.KindUnsub, SID: sid, Max: max}
		checkParsedBack(t, true, proto.AppendUnsub(dst, sid, max)[len(dst):], render(&want))
		checkParsedBack(t, true, proto.AppendPing(nil), render(&proto.Op{Kind: proto.KindPing}))
		checkParsedBack(t, false, proto.AppendPing(nil), render(&proto.Op{Kind: proto.KindPing}))
		checkParsedBack(t, true, proto.AppendPong(nil), render(&proto.Op{Kind: proto.KindPong}))
		checkParsedBack(t, false, proto.AppendOK(nil), render(&proto.Op{Kind: proto.KindOK}))

		// CONNECT and INFO carry one line of JSON; the encoders leave that
		// to the caller, so only single lines round-trip.
		if !bytes.ContainsRune(raw, '\n') {
			for _, c := range []struct {
				client bool
				kind   proto.Kind
				b      []byte
			}{
				{true, proto.KindConnect, proto.AppendConnect(nil, raw)},
				{false, proto.KindInfo, proto.AppendInfo(nil, raw)},
			} {
				text := bytes.TrimSpace(raw)
				if len(text) == 0 {
					checkParsedBackError(t, c.client, c.b, "ErrArgs")
					continue
				}
				checkParsedBack(t, c.client, c.b, render(&proto.Op{Kind: c.kind, Text: text}))
			}
		}

		// -ERR quotes its text; any text without LF round-trips exactly.
		if !strings.Contains(hval, "\n") {
			checkParsedBack(t, false, proto.AppendErr(nil, hval), render(&proto.Op{Kind: proto.KindErr, Text: []byte(hval)}))
		}

		// MSG and HMSG: the server encoders do not validate, so give them
		// what a server sends.
		if !pubOK {
			return
		}
		want = proto.Op{Kind: proto.KindMsg, Subject: []byte(subject), SID: sid, Reply: []byte(reply), Payload: payload}
		checkParsedBack(t, false, proto.AppendMsg(nil, subject, sid, reply, payload), render(&want))
		if hdrOK {
			block, err := proto.AppendHeaderBlock(nil, h)
			if err != nil || string(block) != refHeaderBlock(fields) {
				t.Fatalf("AppendHeaderBlock(%q) = %q, %v", fields, block, err)
			}
			want = proto.Op{Kind: proto.KindHMsg, Subject: []byte(subject), SID: sid, Reply: []byte(reply),
				Header: block, Payload: payload}
			op := checkParsedBack(t, false, proto.AppendHMsg(nil, subject, sid, reply, block, payload), render(&want))
			checkHeaderFields(t, proto.RawHeader(op.Header), fields, hkey)
		} else if block, err := proto.AppendHeaderBlock(newDst(), h); err == nil || len(block) != len(newDst()) {
			t.Fatalf("AppendHeaderBlock(%q) accepted: %q, %v", fields, block, err)
		}
		if rawOK {
			want = proto.Op{Kind: proto.KindHMsg, Subject: []byte(subject), SID: sid, Reply: []byte(reply),
				Header: raw, Payload: payload}
			checkParsedBack(t, false, proto.AppendHMsg(nil, subject, sid, reply, raw, payload), render(&want))
		}
	})
}

// errIf returns err when cond holds, nil otherwise.
func errIf(cond bool, err error) error {
	if cond {
		return err
	}
	return nil
}

// dstPrefix is what newDst holds; the spare capacity holds dstSpare bytes.
const (
	dstPrefix = "prefix"
	dstSpare  = 0xEE
)

// newDst returns a short dst with spare capacity filled with dstSpare, so
// that checkEncoded can tell whether a rejecting encoder wrote anything.
func newDst() []byte {
	b := bytes.Repeat([]byte{dstSpare}, 256)
	copy(b, dstPrefix)
	return b[:len(dstPrefix)]
}

// checkEncoded checks an encoder's result against the expected error and
// reports whether the encoder accepted its arguments. A rejection must
// return dst itself, unchanged, with nothing written to its spare capacity.
func checkEncoded(t *testing.T, name string, dst, b []byte, err, want error) bool {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("%s rejected its arguments: %v", name, err)
		}
		if !bytes.HasPrefix(b, []byte(dstPrefix)) {
			t.Fatalf("%s overwrote dst: %q", name, b)
		}
		return true
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %v", name, err, want)
	}
	if len(b) != len(dst) || cap(b) != cap(dst) || unsafe.SliceData(b) != unsafe.SliceData(dst) || string(b) != dstPrefix {
		t.Fatalf("%s failed but changed dst: %q", name, b)
	}
	if spare := dst[len(dst):cap(dst)]; slices.ContainsFunc(spare, func(c byte) bool { return c != dstSpare }) {
		t.Fatalf("%s failed but wrote past dst: %q", name, spare)
	}
	return false
}

// checkParsedBack parses an encoded frame, whole and byte by byte, and
// requires exactly one op rendering as want; it returns that op (whole).
func checkParsedBack(t *testing.T, client bool, frame []byte, want string) proto.Op {
	t.Helper()
	p := &proto.Parser{Limits: roundTripLimits, ClientOps: client}
	p.Feed(clone(frame))
	op, err := p.Next()
	if err != nil || op == nil {
		t.Fatalf("frame %q (ClientOps=%v) parsed to %v, %v", frame, client, op, err)
	}
	if got := render(op); got != want {
		t.Fatalf("frame %q (ClientOps=%v)\nparsed: %s\nwant:   %s", frame, client, got, want)
	}
	first := *op
	if op, err := p.Next(); op != nil || err != nil || p.Buffered() {
		t.Fatalf("frame %q: more after the op: %v, %v, buffered %v", frame, op, err, p.Buffered())
	}
	out := parse(t, &proto.Parser{Limits: roundTripLimits, ClientOps: client}, bytewise(frame))
	if out.err != "" || out.buffered || string(out.ops) != want+"\n" {
		t.Fatalf("frame %q byte by byte:\n%s\nwant:\n%s", frame, out, want)
	}
	return first
}

// checkParsedBackError requires that frame fails to parse with the
// sentinel called want.
func checkParsedBackError(t *testing.T, client bool, frame []byte, want string) {
	t.Helper()
	out := parse(t, &proto.Parser{Limits: roundTripLimits, ClientOps: client}, wholeChunk(frame))
	if out.err != want || len(out.ops) != 0 {
		t.Fatalf("frame %q: %s, want %s", frame, out, want)
	}
}

// checkHeaderFields reads a received header block with RawHeader and
// requires the fields that were encoded, values trimmed of blanks.
func checkHeaderFields(t *testing.T, r proto.RawHeader, fields [][2]string, key string) {
	t.Helper()
	if err := r.Validate(); err != nil {
		t.Fatalf("encoded block %q: %v", r, err)
	}
	if code, desc := r.Status(); code != 0 || len(desc) != 0 {
		t.Fatalf("encoded block %q has status %d %q", r, code, desc)
	}
	var want [][2]string
	for _, f := range fields {
		want = append(want, [2]string{f[0], strings.Trim(f[1], " \t")})
	}
	got := rawFields(r)
	if !slices.Equal(got, want) {
		t.Fatalf("block %q: fields %q, want %q", r, got, want)
	}
	v, ok := r.Lookup(key)
	i := slices.IndexFunc(want, func(f [2]string) bool { return f[0] == key })
	if ok != (i >= 0) || (ok && string(v) != want[i][1]) {
		t.Fatalf("block %q: Lookup(%q) = %q, %v; want the first of %q", r, key, v, ok, want)
	}
	h, err := r.Header()
	if err != nil || !slices.Equal(headerFields(h), want) {
		t.Fatalf("block %q: Header() = %q, %v; want %q", r, headerFields(h), err, want)
	}
}

// rawFields collects RawHeader.All.
func rawFields(r proto.RawHeader) [][2]string {
	var out [][2]string
	for k, v := range r.All() {
		out = append(out, [2]string{string(k), string(v)})
	}
	return out
}

// headerFields collects Header.All.
func headerFields(h *proto.Header) [][2]string {
	var out [][2]string
	for k, v := range h.All() {
		out = append(out, [2]string{k, v})
	}
	return out
}

// FuzzRawHeader runs RawHeader's methods on arbitrary bytes: Validate and
// Status agree with references, All, Lookup, Get and Header agree with each
// other, nothing modifies the block, and a valid block survives Header,
// AppendHeaderBlock and parsing again.
func FuzzRawHeader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		orig := clone(data)
		r := proto.RawHeader(data)

		verr := r.Validate()
		if verr != nil && !errors.Is(verr, proto.ErrBadHeader) {
			t.Fatalf("Validate(%q) = %v, not ErrBadHeader", data, verr)
		}
		if valid := refValidBlock(data); valid != (verr == nil) {
			t.Fatalf("Validate(%q) = %v, reference says valid=%v", data, verr, valid)
		}

		code, desc := r.Status()
		wantCode, wantDesc := refStatus(data)
		if code != wantCode || string(desc) != wantDesc {
			t.Fatalf("Status(%q) = %d %q, reference %d %q", data, code, desc, wantCode, wantDesc)
		}

		fields := rawFields(r)
		for range r.All() {
			break // an iterator stopped early must not panic
		}
		v, ok := r.Lookup(key)
		i := slices.IndexFunc(fields, func(f [2]string) bool { return f[0] == key })
		if ok != (i >= 0) || (ok && string(v) != fields[i][1]) {
			t.Fatalf("block %q: Lookup(%q) = %q, %v; All gives %q", data, key, v, ok, fields)
		}
		if g := r.Get(key); string(g) != string(v) {
			t.Fatalf("block %q: Get(%q) = %q, Lookup %q", data, key, g, v)
		}

		h, herr := r.Header()
		if (herr == nil) != (verr == nil) || (herr != nil && (h != nil || !errors.Is(herr, proto.ErrBadHeader))) {
			t.Fatalf("block %q: Header() = %v, %v; Validate %v", data, h, herr, verr)
		}
		if !bytes.Equal(data, orig) {
			t.Fatalf("RawHeader methods modified the block: %q, was %q", data, orig)
		}
		if verr != nil {
			return
		}

		if want := refFields(data); !slices.Equal(fields, want) {
			t.Fatalf("block %q: All gives %q, reference %q", data, fields, want)
		}
		if got := headerFields(h); !slices.Equal(got, fields) || h.Len() != len(fields) {
			t.Fatalf("block %q: Header() holds %q, All gives %q", data, got, fields)
		}
		if h.Validate() != nil {
			// A received block may carry a NUL in a value, which a Header
			// to publish may not; nothing else may differ.
			if !slices.ContainsFunc(fields, func(f [2]string) bool { return strings.Contains(f[1], "\x00") }) {
				t.Fatalf("block %q is valid, its Header() %q is not: %v", data, fields, h.Validate())
			}
			return
		}
		block, err := proto.AppendHeaderBlock(nil, h)
		if err != nil || len(block) != h.EncodedLen() {
			t.Fatalf("AppendHeaderBlock(%q) = %q, %v; EncodedLen %d", fields, block, err, h.EncodedLen())
		}
		checkHeaderFields(t, proto.RawHeader(block), fields, key)
	})
}
