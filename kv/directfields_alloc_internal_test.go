//go:build !race

package kv

import (
	"testing"

	"github.com/natsio/natsio/internal/stamp"
	"github.com/natsio/natsio/proto"
)

// The race detector's instrumentation allocates, hence the build tag.

// TestScanDirectAllocatesNothing: reading a direct get reply's header (the
// one-pass scan, the sequence, the time stamp and the operation) works on
// views of the received block.
func TestScanDirectAllocatesNothing(t *testing.T) {
	h := proto.HeaderFromBlock([]byte("NATS/1.0\r\nNats-Stream: KV_b\r\nNats-Subject: $KV.b.k\r\nNats-Sequence: 9\r\n" +
		"Nats-Time-Stamp: 2026-11-30T16:41:35.147175708Z\r\nKV-Operation: DEL\r\n\r\n"))
	n := testing.AllocsPerRun(100, func() {
		f := scanDirect(&h)
		seq, ok := proto.ParseUint(f.seq)
		_, err := stamp.Parse(f.stamp)
		op, oerr := opFrom(f.op, f.hasOp, f.marker, f.hasMarker)
		if !ok || seq != 9 || err != nil || oerr != nil || op != OpDelete || f.subject != "$KV.b.k" {
			t.Fatalf("scan: %+v", f)
		}
	})
	if n != 0 {
		t.Errorf("scanDirect and its parses: %v allocs, want 0", n)
	}
}
