package kv

import (
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// TestScanDirectMatchesLookups checks the one-pass header scan of a
// direct get reply against a lookup of each field.
func TestScanDirectMatchesLookups(t *testing.T) {
	blocks := []string{
		"NATS/1.0\r\nNats-Stream: KV_b\r\nNats-Subject: $KV.b.k\r\nNats-Sequence: 473\r\nNats-Time-Stamp: 2026-11-30T16:41:35.147175708Z\r\n\r\n",
		"NATS/1.0\r\nNats-Stream: KV_b\r\nNats-Subject: $KV.b.k\r\nNats-Sequence: 9\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\nKV-Operation: DEL\r\n\r\n",
		"NATS/1.0\r\nNats-Sequence: 7\r\nKV-Operation: PURGE\r\nNats-Marker-Reason: MaxAge\r\n\r\n",
		"NATS/1.0\r\nNats-Sequence: 7\r\nNats-Marker-Reason: Remove\r\n\r\n",
		// Repeated keys: the last sequence, time stamp and subject count
		// (the server's, appended after the stored ones), the first
		// operation, as for Lookup.
		"NATS/1.0\r\nNats-Sequence: 1\r\nNats-Sequence: 2\r\nKV-Operation: \r\nKV-Operation: DEL\r\n\r\n",
		"NATS/1.0\r\nNats-Subject: $KV.b.victim\r\nNats-Sequence: 999\r\nNats-Time-Stamp: 2001-01-01T00:00:00Z\r\n" +
			"Nats-Stream: KV_b\r\nNats-Subject: $KV.b.evil\r\nNats-Sequence: 3\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\n\r\n",
		// A malformed line ends the fields, as for Lookup.
		"NATS/1.0\r\nNats-Sequence: 3\r\nbroken\r\nKV-Operation: DEL\r\n\r\n",
		"NATS/1.0\r\n\r\n",
		"",
	}
	for _, b := range blocks {
		hv := proto.HeaderFromBlock([]byte(b))
		h := &hv
		f := scanDirect(h)
		want := func(key string, got string) {
			t.Helper()
			if v, ok := h.Lookup(key); v != got {
				t.Errorf("block %q: %s = %q, Lookup gives %q (%v)", b, key, got, v, ok)
			}
		}
		wantLast := func(key string, got string) {
			t.Helper()
			last := ""
			for v := range h.Values(key) {
				last = v
			}
			if last != got {
				t.Errorf("block %q: %s = %q, the last value is %q", b, key, got, last)
			}
		}
		wantLast(jsapi.HeaderSequence, f.seq)
		wantLast(jsapi.HeaderTimeStamp, f.stamp)
		wantLast(jsapi.HeaderSubject, f.subject)
		want(opHeader, f.op)
		want(jsapi.HeaderMarkerReason, f.marker)
		if _, ok := h.Lookup(opHeader); ok != f.hasOp {
			t.Errorf("block %q: hasOp %v", b, f.hasOp)
		}
		if _, ok := h.Lookup(jsapi.HeaderMarkerReason); ok != f.hasMarker {
			t.Errorf("block %q: hasMarker %v", b, f.hasMarker)
		}
		op, err := opFrom(f.op, f.hasOp, f.marker, f.hasMarker)
		wantOp, wantErr := opOf(h)
		if op != wantOp || (err == nil) != (wantErr == nil) {
			t.Errorf("block %q: opFrom = %v, %v; opOf = %v, %v", b, op, err, wantOp, wantErr)
		}
	}
}

// BenchmarkScanDirect reads a direct get reply's header as Get does.
func BenchmarkScanDirect(b *testing.B) {
	h := proto.HeaderFromBlock([]byte("NATS/1.0\r\nNats-Stream: KV_config\r\nNats-Subject: $KV.config.app.timeout\r\n" +
		"Nats-Sequence: 473\r\nNats-Time-Stamp: 2026-11-30T16:41:35.147175708Z\r\n\r\n"))
	b.ReportAllocs()
	for b.Loop() {
		f := scanDirect(&h)
		if len(f.seq) == 0 || f.hasOp {
			b.Fatal("bad scan")
		}
	}
}
