// Package fuzzhook hands the fuzz targets of package fuzz the parsers of
// received data that natsio's packages keep unexported: Direct Get replies
// (jsapi, kv, extra) and object meta (objstore). Each package sets its
// variable while it initialises; nothing but package fuzz reads them, and
// they change nothing in how the packages behave.
package fuzzhook

import (
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// Stored is what a Direct Get parser read from a reply.
type Stored struct {
	Subject  string
	Sequence uint64
	Time     time.Time
	// Header is the stored message's header: the reply's fields without
	// those the server added.
	Header proto.Header
	Data   []byte
	// NumPending and LastSequence are read by the batch parser only;
	// HasPending reports whether the reply had Nats-Num-Pending.
	NumPending, LastSequence uint64
	HasPending               bool
}

// KVFields are the fields kv reads from a Direct Get reply's header, and
// the operation it makes of them (op: kv.Op; opErr non-nil for an unknown
// KV-Operation).
type KVFields struct {
	Seq, Stamp, Subject, Op, Marker string
	HasOp, HasMarker                bool
	Operation                       uint8
	OpErr                           error
}

// Set by jsapi, extra, kv and objstore.
var (
	// DirectGet is jsapi's parser of a Direct Get reply. It may rewrite
	// m's header block in place.
	DirectGet func(m *conn.Msg) (Stored, error)
	// BatchGet is extra's parser of one reply of a batch Direct Get. It
	// may rewrite m's header block in place.
	BatchGet func(m *conn.Msg) (Stored, error)
	// KVDirect is kv's scan of a Direct Get reply's header.
	KVDirect func(h *proto.Header) KVFields
	// ObjectMeta decodes data as the meta stored for the object name in
	// the store bucket, as GetInfo does: on success, the NUID and the chunk
	// subject a read or purge would use. Listed reports whether List and
	// Watch would yield the same message found on name's meta subject.
	ObjectMeta func(bucket, name string, data []byte) (nuid, chunkSubject string, listed bool, err error)
)
