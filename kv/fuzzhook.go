package kv

import (
	"github.com/natsio/natsio/internal/fuzzhook"
	"github.com/natsio/natsio/proto"
)

func init() {
	fuzzhook.KVDirect = func(h *proto.Header) fuzzhook.KVFields {
		f := scanDirect(h)
		op, err := opFrom(f.op, f.hasOp, f.marker, f.hasMarker)
		return fuzzhook.KVFields{Seq: f.seq, Stamp: f.stamp, Subject: f.subject, Op: f.op, Marker: f.marker,
			HasOp: f.hasOp, HasMarker: f.hasMarker, Operation: uint8(op), OpErr: err}
	}
}
