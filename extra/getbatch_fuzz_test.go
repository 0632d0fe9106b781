package extra

import (
	"errors"
	"slices"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/directget"
	"github.com/natsio/natsio/internal/fuzzref"
	"github.com/natsio/natsio/internal/stamp"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// FuzzBatchGet feeds a reply header block (any block the connection would
// deliver) and a payload to the reader of one reply of a batch Direct Get
// (GetBatch, GetLastMsgsFor) and compares it with a reference written from
// what the server sends: its fields are the final run of its keys, so a
// stored field of the same name is never taken for the server's. Its seeds
// are those of the fuzz package's FuzzDirectGet.
func FuzzBatchGet(f *testing.F) {
	f.Fuzz(func(t *testing.T, block, data []byte) {
		block, deliverable := fuzzref.DeliverableBlock(t, block)
		if !deliverable {
			return // the connection delivers no such message
		}
		code, _ := fuzzref.Status(block)
		if code != 0 {
			return // statuses are handled before the parser is called
		}
		m := &conn.Msg{Subject: "_INBOX.r", Header: proto.HeaderFromBlock(slices.Clone(block)), Data: data}
		var got jsapi.StoredMsg
		var r directget.Reply
		r.Parse(m.Header.Block())
		pending, err := parseStored(m, &r, &got)

		// The reference: the server's fields are the final run of its keys.
		fields := fuzzref.Fields(block)
		run := len(fields)
		for run > 0 && slices.Contains(fuzzref.BatchKeys, fields[run-1][0]) {
			run--
		}
		server := fields[run:]
		var want jsapi.StoredMsg
		wantPending := false
		ok := len(block) > 0 && len(server) > 0
		value := func(key string) (string, bool) {
			if i := fuzzref.LastOf(server, key); i >= 0 {
				return server[i][1], true
			}
			return "", false
		}
		subj, hasSubj := value("Nats-Subject")
		seq, hasSeq := value("Nats-Sequence")
		ok = ok && hasSubj && subj != "" && hasSeq
		if ok {
			want.Subject = subj
			want.Sequence, ok = fuzzref.Uint(seq)
		}
		if ts, has := value("Nats-Time-Stamp"); ok && has {
			var perr error
			want.Time, perr = stamp.Parse(ts)
			ok = perr == nil
		}
		if v, has := value("Nats-Num-Pending"); ok && has {
			want.NumPending, ok = fuzzref.Uint(v)
			wantPending = true
		}
		if v, has := value("Nats-Last-Sequence"); ok && has {
			want.LastSequence, ok = fuzzref.Uint(v)
		}

		if (err == nil) != ok {
			t.Fatalf("block %q: %+v, %v; the reference says valid=%v", block, got, err, ok)
		}
		if err != nil {
			if !errors.Is(err, jsapi.ErrBadResponse) {
				t.Fatalf("block %q: %v is not ErrBadResponse", block, err)
			}
			return
		}
		if got.Subject != want.Subject || got.Sequence != want.Sequence || !got.Time.Equal(want.Time) ||
			got.NumPending != want.NumPending || got.LastSequence != want.LastSequence || pending != wantPending {
			t.Fatalf("block %q: %+v; want %+v", block, got, want)
		}
		if h := fuzzref.ResultFields(t, &got.Header); !fuzzref.SameFields(h, fields[:run]) {
			t.Fatalf("block %q: stored header %q; want %q", block, h, fields[:run])
		}
	})
}
