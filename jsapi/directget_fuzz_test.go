package jsapi

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fuzzref"
	"github.com/natsio/natsio/internal/stamp"
	"github.com/natsio/natsio/proto"
)

// FuzzDirectGet feeds a reply header block (any block the connection would
// deliver) and a payload to the reader of Direct Get replies (Stream.GetMsg
// and friends) and compares it with a reference written from what the
// server sends: its fields come after the stored header, so a stored field
// of the same name is never taken for the server's, and never makes a read
// fail. Its seeds are those of the fuzz package's FuzzDirectGet.
func FuzzDirectGet(f *testing.F) {
	f.Fuzz(func(t *testing.T, block, data []byte) {
		block, deliverable := fuzzref.DeliverableBlock(t, block)
		if !deliverable {
			return // the connection delivers no such message
		}
		m := &conn.Msg{Subject: "_INBOX.r", Header: proto.HeaderFromBlock(slices.Clone(block)), Data: data}
		sm, err := parseDirectGet(m)
		var got StoredMsg
		if sm != nil {
			got = *sm
		}

		// The reference.
		fields := fuzzref.Fields(block)
		code, _ := fuzzref.Status(block)
		var want StoredMsg
		ok := len(block) > 0 && code == 0
		var last [4]int
		for i, k := range fuzzref.DirectKeys {
			last[i] = fuzzref.LastOf(fields, k)
		}
		if ok && (last[1] < 0 || last[2] < 0) {
			ok = false
		}
		if ok {
			want.Subject = fields[last[1]][1]
			want.Sequence, ok = fuzzref.Uint(fields[last[2]][1])
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
			t.Fatalf("block %q: %+v, %v; the reference says valid=%v", block, got, err, ok)
		}
		if err != nil {
			if code == 404 && !errors.Is(err, ErrMsgNotFound) {
				t.Fatalf("block %q: 404 is %v, not ErrMsgNotFound", block, err)
			}
			if code == 0 && !errors.Is(err, ErrBadResponse) {
				t.Fatalf("block %q: %v is not ErrBadResponse", block, err)
			}
			return
		}
		if got.Subject != want.Subject || got.Sequence != want.Sequence || !got.Time.Equal(want.Time) || !bytes.Equal(got.Data, data) {
			t.Fatalf("block %q: %q #%d %v; want %q #%d %v", block, got.Subject, got.Sequence, got.Time,
				want.Subject, want.Sequence, want.Time)
		}
		if h := fuzzref.ResultFields(t, &got.Header); !fuzzref.SameFields(h, wantHeader) {
			t.Fatalf("block %q: stored header %q; want %q", block, h, wantHeader)
		}
	})
}
