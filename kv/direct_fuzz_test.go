package kv

import (
	"errors"
	"slices"
	"testing"

	"github.com/natsio/natsio/internal/fuzzref"
	"github.com/natsio/natsio/proto"
)

// FuzzKVDirect feeds a reply header block (any block the connection would
// deliver) to the scan of a Direct Get reply that Get and GetRevision make,
// and compares the fields and the operation it reads with a reference: the
// server's fields are the last of their keys, the operation's the first.
// Its seeds are those of the fuzz package's FuzzDirectGet; data is unused.
func FuzzKVDirect(f *testing.F) {
	f.Fuzz(func(t *testing.T, block, _ []byte) {
		block, deliverable := fuzzref.DeliverableBlock(t, block)
		if !deliverable {
			return // the connection delivers no such message
		}
		h := proto.HeaderFromBlock(slices.Clone(block))
		got := scanDirect(&h)
		gotOp, opErr := opFrom(got.op, got.hasOp, got.marker, got.hasMarker)

		fields := fuzzref.Fields(block)
		lastVal := func(key string) string {
			if i := fuzzref.LastOf(fields, key); i >= 0 {
				return fields[i][1]
			}
			return ""
		}
		firstVal := func(key string) (string, bool) {
			for _, fl := range fields {
				if fl[0] == key {
					return fl[1], true
				}
			}
			return "", false
		}
		op, hasOp := firstVal("KV-Operation")
		marker, hasMarker := firstVal("Nats-Marker-Reason")
		want := directFields{seq: lastVal("Nats-Sequence"), stamp: lastVal("Nats-Time-Stamp"),
			subject: lastVal("Nats-Subject"), op: op, marker: marker, hasOp: hasOp, hasMarker: hasMarker}
		wantOp, unknown := OpPut, false
		switch {
		case hasOp:
			switch op {
			case "DEL":
				wantOp = OpDelete
			case "PURGE":
				wantOp = OpPurge
			case "PUT":
			default:
				unknown = true
			}
		case hasMarker:
			switch marker {
			case "MaxAge", "Purge":
				wantOp = OpPurge
			case "Remove":
				wantOp = OpDelete
			}
		}
		if (opErr != nil) != unknown || unknown && !errors.Is(opErr, ErrUnknownOperation) {
			t.Fatalf("block %q: operation error %v; want unknown=%v", block, opErr, unknown)
		}
		if got != want || !unknown && gotOp != wantOp {
			t.Fatalf("block %q: %+v %v; want %+v %v", block, got, gotOp, want, wantOp)
		}
	})
}
