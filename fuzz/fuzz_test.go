package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/natsio/natsio/internal/fuzzref"
	"github.com/natsio/natsio/internal/wire"
	"github.com/natsio/natsio/proto"
)

// maxSplitInput bounds the inputs FuzzParserSplits splits at every byte
// boundary; that loop costs up to len(input)² (one op filling the input).
const maxSplitInput = 2 << 10

// maxInput bounds the part of an input the parser targets look at at all.
const maxInput = fuzzref.MaxInput

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
		pubOK := fuzzref.ValidSubject(subject, false) && (reply == "" || fuzzref.ValidSubject(reply, false))
		pubErr := errIf(!pubOK, proto.ErrBadSubject)

		// The header: hkey with each ';'-separated part of hval, or none.
		var h *proto.Header
		var fields [][2]string
		hdrOK := true
		if hkey != "" {
			h = &proto.Header{}
			hdrOK = fuzzref.ValidKey(hkey)
			for v := range strings.SplitSeq(hval, ";") {
				h.Add(hkey, v)
				fields = append(fields, [2]string{hkey, v})
				hdrOK = hdrOK && refValidValue(v)
			}
		}
		if err := h.Validate(); (err == nil) != hdrOK || (err != nil && !errors.Is(err, proto.ErrBadHeader)) {
			t.Fatalf("Header %q Validate: %v, want valid=%v", fields, err, hdrOK)
		}
		// A received block published again is written as it is; no block
		// is the zero Header, the empty block.
		received := proto.HeaderFromBlock(raw)
		rawOK, rawBlock := fuzzref.ValidBlock(raw), raw
		if len(raw) == 0 {
			rawOK, rawBlock = true, []byte("NATS/1.0\r\n\r\n")
		}

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
			checkHeaderFields(t, op.Header, fields, hkey)
		}

		// HPUB with a received header, forwarded unmodified
		dst = newDst()
		b, err = proto.AppendHPub(dst, subject, reply, &received, payload)
		wantErr = pubErr
		if wantErr == nil && !rawOK {
			wantErr = proto.ErrBadHeader
		}
		if checkEncoded(t, "AppendHPub received", dst, b, err, wantErr) {
			if received.EncodedLen() != len(rawBlock) {
				t.Fatalf("received %q: EncodedLen %d", raw, received.EncodedLen())
			}
			want := proto.Op{Kind: proto.KindHPub, Subject: []byte(subject), Reply: []byte(reply),
				Header: rawBlock, Payload: payload}
			checkParsedBack(t, true, b[len(dst):], render(&want))
		}

		// SUB
		dst = newDst()
		b, err = proto.AppendSub(dst, subject, queue, sid)
		wantErr = nil
		switch {
		case !fuzzref.ValidSubject(subject, true):
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
		checkParsedBack(t, false, wire.AppendOK(nil), render(&proto.Op{Kind: proto.KindOK}))

		// CONNECT and INFO carry one line of JSON; the encoders leave that
		// to the caller, so only single lines round-trip.
		if !bytes.ContainsRune(raw, '\n') {
			for _, c := range []struct {
				client bool
				kind   proto.Kind
				b      []byte
			}{
				{true, proto.KindConnect, proto.AppendConnect(nil, raw)},
				{false, proto.KindInfo, wire.AppendInfo(nil, raw)},
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
			checkParsedBack(t, false, wire.AppendErr(nil, hval), render(&proto.Op{Kind: proto.KindErr, Text: []byte(hval)}))
		}

		// MSG and HMSG: the server encoders do not validate, so give them
		// what a server sends.
		if !pubOK {
			return
		}
		want = proto.Op{Kind: proto.KindMsg, Subject: []byte(subject), SID: sid, Reply: []byte(reply), Payload: payload}
		checkParsedBack(t, false, wire.AppendMsg(nil, subject, sid, reply, payload), render(&want))
		if hdrOK {
			block, err := proto.AppendHeaderBlock(nil, h)
			if err != nil || string(block) != refHeaderBlock(fields) {
				t.Fatalf("AppendHeaderBlock(%q) = %q, %v", fields, block, err)
			}
			want = proto.Op{Kind: proto.KindHMsg, Subject: []byte(subject), SID: sid, Reply: []byte(reply),
				Header: block, Payload: payload}
			op := checkParsedBack(t, false, wire.AppendHMsg(nil, subject, sid, reply, block, payload), render(&want))
			checkHeaderFields(t, op.Header, fields, hkey)
		} else if block, err := proto.AppendHeaderBlock(newDst(), h); err == nil || len(block) != len(newDst()) {
			t.Fatalf("AppendHeaderBlock(%q) accepted: %q, %v", fields, block, err)
		}
		if rawOK && len(raw) > 0 {
			want = proto.Op{Kind: proto.KindHMsg, Subject: []byte(subject), SID: sid, Reply: []byte(reply),
				Header: raw, Payload: payload}
			checkParsedBack(t, false, wire.AppendHMsg(nil, subject, sid, reply, raw, payload), render(&want))
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

// checkHeaderFields reads an encoded header block as a received header
// and requires the fields that were encoded, values trimmed of blanks,
// also once the header is modified (its fields materialised) and cloned.
func checkHeaderFields(t *testing.T, block []byte, fields [][2]string, key string) {
	t.Helper()
	if err := proto.ValidateHeaderBlock(block); err != nil {
		t.Fatalf("encoded block %q: %v", block, err)
	}
	r := proto.HeaderFromBlock(block)
	if code, desc := r.Status(); code != 0 || desc != "" {
		t.Fatalf("encoded block %q has status %d %q", block, code, desc)
	}
	var want [][2]string
	for _, f := range fields {
		want = append(want, [2]string{f[0], strings.Trim(f[1], " \t")})
	}
	if got := headerFields(&r); !slices.Equal(got, want) || r.Len() != len(want) {
		t.Fatalf("block %q: fields %q (Len %d), want %q", block, got, r.Len(), want)
	}
	v, ok := r.Lookup(key)
	i := slices.IndexFunc(want, func(f [2]string) bool { return f[0] == key })
	if ok != (i >= 0) || (ok && v != want[i][1]) {
		t.Fatalf("block %q: Lookup(%q) = %q, %v; want the first of %q", block, key, v, ok, want)
	}
	if c := r.Clone(); !slices.Equal(headerFields(c), want) {
		t.Fatalf("block %q: Clone holds %q, want %q", block, headerFields(c), want)
	}
	m := materialised(block)
	if got := headerFields(&m); !slices.Equal(got, want) || m.Block() != nil {
		t.Fatalf("block %q: modified header holds %q (block %q), want %q", block, got, m.Block(), want)
	}
}

// markKey is a key no valid block holds (it is not a token).
const markKey = "fuzz mark"

// materialised returns the header of block after a modification that
// leaves its fields as they were: the fields views of block, the block
// dropped.
func materialised(block []byte) proto.Header {
	m := proto.HeaderFromBlock(block)
	m.Add(markKey, "1")
	m.Del(markKey)
	return m
}

// headerFields collects Header.All.
func headerFields(h *proto.Header) [][2]string {
	var out [][2]string
	for k, v := range h.All() {
		out = append(out, [2]string{k, v})
	}
	return out
}

// FuzzReceivedHeader reads arbitrary bytes as a received header
// (proto.HeaderFromBlock): ValidateHeaderBlock and Status agree with
// references; All, Len, Lookup, Get and Values agree with each other and,
// for a valid block, with a reference; modifying, cloning and encoding
// keep the fields; nothing writes into the block; a valid block is
// published again byte for byte, and a header rebuilt from its fields
// survives AppendHeaderBlock and parsing again.
func FuzzReceivedHeader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		orig := clone(data)

		verr := proto.ValidateHeaderBlock(data)
		if verr != nil && !errors.Is(verr, proto.ErrBadHeader) {
			t.Fatalf("ValidateHeaderBlock(%q) = %v, not ErrBadHeader", data, verr)
		}
		if valid := fuzzref.ValidBlock(data); valid != (verr == nil) {
			t.Fatalf("ValidateHeaderBlock(%q) = %v, reference says valid=%v", data, verr, valid)
		}
		r := proto.HeaderFromBlock(data)
		if rerr := r.Validate(); (rerr == nil) != (verr == nil) {
			t.Fatalf("block %q: Validate %v, ValidateHeaderBlock %v", data, rerr, verr)
		}
		if r.IsZero() != (len(data) == 0) {
			t.Fatalf("block %q: IsZero %v", data, r.IsZero())
		}

		code, desc := r.Status()
		wantCode, wantDesc := fuzzref.Status(data)
		if code != wantCode || desc != wantDesc {
			t.Fatalf("Status(%q) = %d %q, reference %d %q", data, code, desc, wantCode, wantDesc)
		}

		fields := headerFields(&r)
		if r.Len() != len(fields) {
			t.Fatalf("block %q: Len %d, All gives %q", data, r.Len(), fields)
		}
		for range r.All() {
			break // an iterator stopped early must not panic
		}
		v, ok := r.Lookup(key)
		i := slices.IndexFunc(fields, func(f [2]string) bool { return f[0] == key })
		if ok != (i >= 0) || (ok && v != fields[i][1]) {
			t.Fatalf("block %q: Lookup(%q) = %q, %v; All gives %q", data, key, v, ok, fields)
		}
		if g := r.Get(key); g != v {
			t.Fatalf("block %q: Get(%q) = %q, Lookup %q", data, key, g, v)
		}
		var wantValues []string
		for _, f := range fields {
			if f[0] == key {
				wantValues = append(wantValues, f[1])
			}
		}
		if got := slices.Collect(r.Values(key)); !slices.Equal(got, wantValues) {
			t.Fatalf("block %q: Values(%q) = %q, All gives %q", data, key, got, fields)
		}

		// JSON: each key to its values, keys sorted (encoding/json replaces
		// invalid UTF-8, so only valid text round-trips).
		if j, err := json.Marshal(&r); err != nil {
			t.Fatalf("block %q: MarshalJSON: %v", data, err)
		} else if !slices.ContainsFunc(fields, func(f [2]string) bool { return !utf8.ValidString(f[0]) || !utf8.ValidString(f[1]) }) {
			var back proto.Header
			if err := json.Unmarshal(j, &back); err != nil {
				t.Fatalf("block %q: JSON %s does not decode: %v", data, j, err)
			}
			sorted := slices.Clone(fields)
			slices.SortStableFunc(sorted, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
			if got := headerFields(&back); !slices.Equal(got, sorted) {
				t.Fatalf("block %q: JSON %s decodes to %q, want %q", data, j, got, sorted)
			}
		}

		// A clone reads the same; a modified header holds the same fields,
		// then the added one, and no status.
		c := r.Clone()
		if got := headerFields(c); !slices.Equal(got, fields) {
			t.Fatalf("block %q: Clone holds %q, All gives %q", data, got, fields)
		}
		if cc, cd := c.Status(); cc != code || cd != desc {
			t.Fatalf("block %q: Clone status %d %q, want %d %q", data, cc, cd, code, desc)
		}
		m := proto.HeaderFromBlock(data)
		m.Add(markKey, "1")
		if got := headerFields(&m); !slices.Equal(got, append(slices.Clone(fields), [2]string{markKey, "1"})) {
			t.Fatalf("block %q: after Add holds %q, All gave %q", data, got, fields)
		}
		if mc, _ := m.Status(); mc != 0 || m.Block() != nil {
			t.Fatalf("block %q: modified header keeps status %d, block %q", data, mc, m.Block())
		}
		if !bytes.Equal(data, orig) {
			t.Fatalf("Header methods modified the block: %q, was %q", data, orig)
		}
		if verr != nil {
			return
		}

		if want := fuzzref.Fields(data); !slices.Equal(fields, want) {
			t.Fatalf("block %q: All gives %q, reference %q", data, fields, want)
		}
		// Published again unmodified: the block as received.
		if fwd, err := proto.AppendHeaderBlock(nil, &r); err != nil || (len(data) > 0 && !bytes.Equal(fwd, data)) ||
			(len(data) > 0 && r.EncodedLen() != len(data)) {
			t.Fatalf("block %q forwarded as %q, %v (EncodedLen %d)", data, fwd, err, r.EncodedLen())
		}
		var h proto.Header
		for _, f := range fields {
			h.Add(f[0], f[1])
		}
		if h.Validate() != nil {
			// A received block may carry a NUL in a value, which a Header
			// to publish may not; nothing else may differ.
			if !slices.ContainsFunc(fields, func(f [2]string) bool { return strings.Contains(f[1], "\x00") }) {
				t.Fatalf("block %q is valid, a Header of its fields %q is not: %v", data, fields, h.Validate())
			}
			return
		}
		block, err := proto.AppendHeaderBlock(nil, &h)
		if err != nil || len(block) != h.EncodedLen() {
			t.Fatalf("AppendHeaderBlock(%q) = %q, %v; EncodedLen %d", fields, block, err, h.EncodedLen())
		}
		checkHeaderFields(t, block, fields, key)
	})
}
