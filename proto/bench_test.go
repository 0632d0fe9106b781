package proto

import (
	"bytes"
	"testing"

	"github.com/natsio/natsio/internal/wire"
)

// Fixtures shared by the benchmarks and the allocation tests.

const (
	benchSubject = "events.orders.created"
	benchReply   = "_INBOX.K3pX8h2LqzY7.42"
	// benchBuf is the size the parse fixtures fill with repeated ops, a
	// typical socket read.
	benchBuf = 64 << 10
	// benchChunk cuts the same buffers into reads that split frames at
	// ever-changing places (it is prime).
	benchChunk = 4093
)

var (
	payload16 = bytes.Repeat([]byte("p"), 16)
	payload1k = bytes.Repeat([]byte("q"), 1024)

	msg16 = wire.AppendMsg(nil, benchSubject, 12, "", payload16)
	msg1k = wire.AppendMsg(nil, benchSubject, 12, benchReply, payload1k)
	// benchBlock is a header block with two fields.
	benchBlock = mustBlock(benchHeader(new(Header)))
	hmsg16     = wire.AppendHMsg(nil, benchSubject, 12, benchReply, benchBlock, payload16)
	// statusBlock is a JetStream flow-control style block with a status.
	statusBlock = []byte("NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 5\r\nNats-Last-Stream: 9\r\n\r\n")

	buf16, ops16   = repeatOps(msg16)
	buf1k, ops1k   = repeatOps(msg1k)
	bufH16, opsH16 = repeatOps(hmsg16)
)

// benchHeader fills h with the two fields used throughout.
func benchHeader(h *Header) *Header {
	h.Reset()
	h.Add("Nats-Msg-Id", "b7e2c9d4-6f1a-4c55-9a39-1d2e3f4a5b6c")
	h.Add("Nats-Expected-Last-Sequence", "1234567")
	return h
}

func mustBlock(h *Header) []byte {
	b, err := AppendHeaderBlock(nil, h)
	if err != nil {
		panic(err)
	}
	return b
}

// repeatOps returns as many copies of op as fit in benchBuf, and their count.
func repeatOps(op []byte) ([]byte, int) {
	n := benchBuf / len(op)
	return bytes.Repeat(op, n), n
}

// slab is an Alloc that carves payload buffers out of one preallocated,
// reused block. It is only correct when each owned op is done with before
// the slab wraps around, as in these benchmarks.
type slab struct {
	buf []byte
	off int
}

func newSlab(n int) *slab { return &slab{buf: make([]byte, n)} }

func (s *slab) alloc(n int) []byte {
	if n > len(s.buf) {
		return make([]byte, n)
	}
	if s.off+n > len(s.buf) {
		s.off = 0
	}
	b := s.buf[s.off : s.off+n : s.off+n]
	s.off += n
	return b
}

// feedAll feeds buf to p in chunks of at most chunk bytes (all of it when
// chunk is 0) and returns the number of ops parsed.
func feedAll(tb testing.TB, p *Parser, buf []byte, chunk int) int {
	if chunk <= 0 {
		chunk = len(buf)
	}
	n := 0
	for off := 0; off < len(buf); off += chunk {
		p.Feed(buf[off:min(off+chunk, len(buf))])
		for {
			op, err := p.Next()
			if err != nil {
				tb.Fatal(err)
			}
			if op == nil {
				break
			}
			n++
		}
	}
	return n
}

func benchParse(b *testing.B, buf []byte, ops, chunk int) {
	var p Parser
	p.Alloc = newSlab(1 << 20).alloc
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if n := feedAll(b, &p, buf, chunk); n != ops {
			b.Fatalf("parsed %d ops, want %d", n, ops)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*ops), "ns/msg")
}

// One op of these benchmarks is one ~64 KiB buffer of repeated messages;
// ns/msg is the cost per message.

func BenchmarkParseMsg16(b *testing.B)       { benchParse(b, buf16, ops16, 0) }
func BenchmarkParseMsg1K(b *testing.B)       { benchParse(b, buf1k, ops1k, 0) }
func BenchmarkParseHMsg16(b *testing.B)      { benchParse(b, bufH16, opsH16, 0) }
func BenchmarkParseMsg16Split(b *testing.B)  { benchParse(b, buf16, ops16, benchChunk) }
func BenchmarkParseMsg1KSplit(b *testing.B)  { benchParse(b, buf1k, ops1k, benchChunk) }
func BenchmarkParseHMsg16Split(b *testing.B) { benchParse(b, bufH16, opsH16, benchChunk) }

var sink []byte

func benchAppend(b *testing.B, f func(dst []byte) ([]byte, error)) {
	dst := make([]byte, 0, 4096)
	out, err := f(dst)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		dst, err = f(dst[:0])
		if err != nil {
			b.Fatal(err)
		}
	}
	sink = dst
}

func BenchmarkAppendPub16(b *testing.B) {
	benchAppend(b, func(dst []byte) ([]byte, error) { return AppendPub(dst, benchSubject, "", payload16) })
}

func BenchmarkAppendPub1K(b *testing.B) {
	benchAppend(b, func(dst []byte) ([]byte, error) { return AppendPub(dst, benchSubject, benchReply, payload1k) })
}

// BenchmarkAppendHPub2 includes refilling a reused Header with two fields,
// as a publisher would per message.
func BenchmarkAppendHPub2(b *testing.B) {
	var h Header
	benchAppend(b, func(dst []byte) ([]byte, error) {
		return AppendHPub(dst, benchSubject, "", benchHeader(&h), payload16)
	})
}

func BenchmarkAppendSub(b *testing.B) {
	benchAppend(b, func(dst []byte) ([]byte, error) { return AppendSub(dst, "events.*.created", "workers", 42) })
}

var (
	sinkInt  int
	sinkBool bool
)

func BenchmarkReceivedHeaderLookup(b *testing.B) {
	r := HeaderFromBlock(statusBlock)
	b.SetBytes(int64(len(statusBlock)))
	b.ReportAllocs()
	for b.Loop() {
		v, ok := r.Lookup("Nats-Last-Stream")
		if !ok || len(v) != 1 {
			b.Fatal("lookup failed")
		}
		sinkBool = ok
	}
}

// directGetBlock is the header of a direct get reply, as a KV read
// receives it.
const directGetBlock = "NATS/1.0\r\nNats-Stream: KV_config\r\nNats-Subject: $KV.config.app.timeout\r\n" +
	"Nats-Sequence: 473\r\nNats-Time-Stamp: 2026-11-30T16:41:35.147175708Z\r\n\r\n"

// BenchmarkReceivedHeaderLookupMissing looks up a field a direct get reply
// of a plain put lacks (KV-Operation): every line is scanned.
func BenchmarkReceivedHeaderLookupMissing(b *testing.B) {
	r := HeaderFromBlock([]byte(directGetBlock))
	b.SetBytes(int64(len(directGetBlock)))
	b.ReportAllocs()
	for b.Loop() {
		v, ok := r.Lookup("KV-Operation")
		if ok || v != "" {
			b.Fatal("found a missing field")
		}
		sinkBool = ok
	}
}

func BenchmarkReceivedHeaderStatus(b *testing.B) {
	r := HeaderFromBlock(statusBlock)
	b.SetBytes(int64(len(statusBlock)))
	b.ReportAllocs()
	for b.Loop() {
		code, desc := r.Status()
		if code != 100 {
			b.Fatal("status failed")
		}
		sinkInt = code + len(desc)
	}
}

func BenchmarkValidateHeaderBlock(b *testing.B) {
	r := statusBlock
	b.SetBytes(int64(len(r)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ValidateHeaderBlock(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateHeaderBlockDirectGet validates the header of a direct
// get reply, as every KV read does on receipt.
func BenchmarkValidateHeaderBlockDirectGet(b *testing.B) {
	r := []byte(directGetBlock)
	b.SetBytes(int64(len(r)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ValidateHeaderBlock(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateAckSubject(b *testing.B) {
	s := "$JS.ACK.ORDERS_STREAM.worker-consumer.1.123456.123450.1764440000000000000.4711"
	for b.Loop() {
		if ValidatePublishSubject(s) != nil {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkValidSubject21(b *testing.B) {
	for b.Loop() {
		sinkBool = validSubject(benchSubject, false)
	}
}
