package fuzz

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/natsio/natsio/conn"
	_ "github.com/natsio/natsio/extra" // sets fuzzhook.BatchGet
	"github.com/natsio/natsio/internal/directget"
	"github.com/natsio/natsio/internal/fuzzhook"
	"github.com/natsio/natsio/internal/stamp"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/proto"
)

// The fields the server appends to a Direct Get reply after the stored
// message's own header; the batch form adds the last two.
var (
	directKeys = []string{"Nats-Stream", "Nats-Subject", "Nats-Sequence", "Nats-Time-Stamp"}
	batchKeys  = append(slices.Clone(directKeys), "Nats-Num-Pending", "Nats-Last-Sequence")
)

// FuzzDirectGet feeds a reply header block (any block the connection would
// deliver: proto.ValidateHeaderBlock accepts it) and a payload to
// internal/directget's Reply.Parse, and to the three readers of Direct Get
// replies built on it — jsapi's (Stream.GetMsg and friends), extra's (one
// reply of GetBatch / GetLastMsgsFor) and kv's field scan (Get,
// GetRevision) — and compares each with a reference written from what the
// server sends: its fields come after the stored header, so a stored field
// of the same name is never taken for the server's, and never makes a read
// fail.
func FuzzDirectGet(f *testing.F) {
	f.Fuzz(func(t *testing.T, block, data []byte) {
		if len(block) > maxInput {
			block = block[:maxInput]
		}
		if len(block) > 0 && proto.ValidateHeaderBlock(block) != nil {
			return // the connection delivers no such message
		}
		if !refValidBlock(block) {
			t.Fatalf("block %q: ValidateHeaderBlock accepts it, the reference does not", block)
		}
		checkParse(t, block)
		checkJSAPIDirect(t, block, data)
		checkBatchDirect(t, block, data)
		checkKVDirect(t, block)
	})
}

// checkParse compares directget's Reply.Parse with the reference: the
// status, the last field of each server key, the final run of server keys,
// and the first field of the keys asked for besides; and requires that
// Parse leaves the block as it was.
func checkParse(t *testing.T, block []byte) {
	orig := slices.Clone(block)
	var r directget.Reply
	r.Parse(block, "KV-Operation", "X-Own")
	if !bytes.Equal(block, orig) {
		t.Fatalf("directget: Parse changed block %q to %q", orig, block)
	}
	code, desc := refStatus(block)
	if r.Status != code || r.Description != desc {
		t.Fatalf("directget: block %q: status %d %q; want %d %q", block, r.Status, r.Description, code, desc)
	}
	fields := refFields(block)
	run := len(fields)
	for run > 0 && slices.Contains(batchKeys, fields[run-1][0]) {
		run--
	}
	for k := directget.Stream; k <= directget.LastSequence; k++ {
		var want, wantTail string
		i := lastOf(fields, k.String())
		if i >= 0 {
			want = fields[i][1]
		}
		if i >= run {
			wantTail = fields[i][1]
		}
		if v, ok := r.Last(k); v != want || ok != (i >= 0) {
			t.Fatalf("directget: block %q: Last(%v) = %q, %v; want %q, %v", block, k, v, ok, want, i >= 0)
		}
		if v, ok := r.InTail(k); v != wantTail || ok != (i >= run) {
			t.Fatalf("directget: block %q: InTail(%v) = %q, %v; want %q, %v", block, k, v, ok, wantTail, i >= run)
		}
	}
	for n, key := range []string{"KV-Operation", "X-Own"} {
		want, has := "", false
		for _, fl := range fields {
			if fl[0] == key {
				want, has = fl[1], true
				break
			}
		}
		if v, ok := r.Also(n); v != want || ok != has {
			t.Fatalf("directget: block %q: Also(%s) = %q, %v; want %q, %v", block, key, v, ok, want, has)
		}
	}
}

// lastOf returns the index of the last field of key in fields, or -1.
func lastOf(fields [][2]string, key string) int {
	for i := len(fields) - 1; i >= 0; i-- {
		if fields[i][0] == key {
			return i
		}
	}
	return -1
}

// resultFields returns the fields of a parser's result header, checking
// that the header is one the connection could have delivered.
func resultFields(t *testing.T, h *proto.Header) [][2]string {
	t.Helper()
	b := h.Block()
	if len(b) == 0 {
		return nil
	}
	if err := proto.ValidateHeaderBlock(b); err != nil {
		t.Fatalf("result header %q: %v", b, err)
	}
	return refFields(b)
}

func sameFields(a, b [][2]string) bool {
	return slices.Equal(a, b) || len(a) == 0 && len(b) == 0
}

func checkJSAPIDirect(t *testing.T, block, data []byte) {
	m := &conn.Msg{Subject: "_INBOX.r", Header: proto.HeaderFromBlock(slices.Clone(block)), Data: data}
	got, err := fuzzhook.DirectGet(m)

	// The reference.
	fields := refFields(block)
	code, _ := refStatus(block)
	var want fuzzhook.Stored
	ok := len(block) > 0 && code == 0
	var last [4]int
	for i, k := range directKeys {
		last[i] = lastOf(fields, k)
	}
	if ok && (last[1] < 0 || last[2] < 0) {
		ok = false
	}
	if ok {
		want.Subject = fields[last[1]][1]
		want.Sequence, ok = refUint(fields[last[2]][1])
	}
	if ok && last[3] >= 0 {
		var perr error
		want.Time, perr = stamp.Parse(fields[last[3]][1])
		ok = perr == nil
	}
	var wantHeader [][2]string
	for i, fl := range fields {
		if !slices.Contains(last[:], i) {
			wantHeader = append(wantHeader, fl)
		}
	}

	if (err == nil) != ok {
		t.Fatalf("jsapi: block %q: %+v, %v; the reference says valid=%v", block, got, err, ok)
	}
	if err != nil {
		if code == 404 && !errors.Is(err, jsapi.ErrMsgNotFound) {
			t.Fatalf("jsapi: block %q: 404 is %v, not ErrMsgNotFound", block, err)
		}
		if code == 0 && !errors.Is(err, jsapi.ErrBadResponse) {
			t.Fatalf("jsapi: block %q: %v is not ErrBadResponse", block, err)
		}
		return
	}
	if got.Subject != want.Subject || got.Sequence != want.Sequence || !got.Time.Equal(want.Time) || !bytes.Equal(got.Data, data) {
		t.Fatalf("jsapi: block %q: %q #%d %v; want %q #%d %v", block, got.Subject, got.Sequence, got.Time,
			want.Subject, want.Sequence, want.Time)
	}
	if h := resultFields(t, &got.Header); !sameFields(h, wantHeader) {
		t.Fatalf("jsapi: block %q: stored header %q; want %q", block, h, wantHeader)
	}
}

func checkBatchDirect(t *testing.T, block, data []byte) {
	code, _ := refStatus(block)
	if code != 0 {
		return // statuses are handled before the parser is called
	}
	m := &conn.Msg{Subject: "_INBOX.r", Header: proto.HeaderFromBlock(slices.Clone(block)), Data: data}
	got, err := fuzzhook.BatchGet(m)

	// The reference: the server's fields are the final run of its keys.
	fields := refFields(block)
	run := len(fields)
	for run > 0 && slices.Contains(batchKeys, fields[run-1][0]) {
		run--
	}
	server := fields[run:]
	var want fuzzhook.Stored
	ok := len(block) > 0 && len(server) > 0
	value := func(key string) (string, bool) {
		if i := lastOf(server, key); i >= 0 {
			return server[i][1], true
		}
		return "", false
	}
	subj, hasSubj := value("Nats-Subject")
	seq, hasSeq := value("Nats-Sequence")
	ok = ok && hasSubj && subj != "" && hasSeq
	if ok {
		want.Subject = subj
		want.Sequence, ok = refUint(seq)
	}
	if ts, has := value("Nats-Time-Stamp"); ok && has {
		var perr error
		want.Time, perr = stamp.Parse(ts)
		ok = perr == nil
	}
	if v, has := value("Nats-Num-Pending"); ok && has {
		want.NumPending, ok = refUint(v)
		want.HasPending = true
	}
	if v, has := value("Nats-Last-Sequence"); ok && has {
		want.LastSequence, ok = refUint(v)
	}

	if (err == nil) != ok {
		t.Fatalf("extra: block %q: %+v, %v; the reference says valid=%v", block, got, err, ok)
	}
	if err != nil {
		if !errors.Is(err, jsapi.ErrBadResponse) {
			t.Fatalf("extra: block %q: %v is not ErrBadResponse", block, err)
		}
		return
	}
	if got.Subject != want.Subject || got.Sequence != want.Sequence || !got.Time.Equal(want.Time) ||
		got.NumPending != want.NumPending || got.LastSequence != want.LastSequence || got.HasPending != want.HasPending {
		t.Fatalf("extra: block %q: %+v; want %+v", block, got, want)
	}
	if h := resultFields(t, &got.Header); !sameFields(h, fields[:run]) {
		t.Fatalf("extra: block %q: stored header %q; want %q", block, h, fields[:run])
	}
}

func checkKVDirect(t *testing.T, block []byte) {
	h := proto.HeaderFromBlock(slices.Clone(block))
	got := fuzzhook.KVDirect(&h)

	fields := refFields(block)
	lastVal := func(key string) string {
		if i := lastOf(fields, key); i >= 0 {
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
	want := fuzzhook.KVFields{Seq: lastVal("Nats-Sequence"), Stamp: lastVal("Nats-Time-Stamp"),
		Subject: lastVal("Nats-Subject"), Op: op, Marker: marker, HasOp: hasOp, HasMarker: hasMarker}
	wantOp, unknown := kv.OpPut, false
	switch {
	case hasOp:
		switch op {
		case "DEL":
			wantOp = kv.OpDelete
		case "PURGE":
			wantOp = kv.OpPurge
		case "PUT":
		default:
			unknown = true
		}
	case hasMarker:
		switch marker {
		case "MaxAge", "Purge":
			wantOp = kv.OpPurge
		case "Remove":
			wantOp = kv.OpDelete
		}
	}
	want.Operation = uint8(wantOp)
	if (got.OpErr != nil) != unknown || unknown && !errors.Is(got.OpErr, kv.ErrUnknownOperation) {
		t.Fatalf("kv: block %q: operation error %v; want unknown=%v", block, got.OpErr, unknown)
	}
	got.OpErr = nil
	if got != want {
		t.Fatalf("kv: block %q: %+v; want %+v", block, got, want)
	}
}
