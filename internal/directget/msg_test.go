package directget_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/directget"
	"github.com/natsio/natsio/proto"
)

// want is an expected read: the message, or the error (errNo: ErrNoHeader;
// otherwise the *Error's key and whether the field is missing).
type want struct {
	subject     string
	seq         uint64
	time        string // "" for the zero time
	header      string // the stored header block, "" for the zero Header
	pending     uint64
	lastSeq     uint64
	hasPending  bool
	errNo       bool
	errKey      directget.Key
	errMissing  bool
	errExpected bool
}

func fails(k directget.Key, missing bool) want {
	return want{errExpected: true, errKey: k, errMissing: missing}
}

var noHeader = want{errExpected: true, errNo: true}

// check compares a read with w.
func check(t *testing.T, block string, m directget.Msg, err error, w want) {
	t.Helper()
	if w.errExpected {
		var e *directget.Error
		switch {
		case w.errNo && !errors.Is(err, directget.ErrNoHeader):
			t.Fatalf("%q: %+v, %v; want ErrNoHeader", block, m, err)
		case !w.errNo && (!errors.As(err, &e) || e.Key != w.errKey || e.Missing != w.errMissing):
			t.Fatalf("%q: %+v, %v; want an *Error for %v (missing %v)", block, m, err, w.errKey, w.errMissing)
		}
		if err.Error() == "" {
			t.Fatalf("%q: empty error text", block)
		}
		return
	}
	if err != nil {
		t.Fatalf("%q: %v", block, err)
	}
	var wt time.Time
	if w.time != "" {
		wt, _ = time.Parse(time.RFC3339Nano, w.time)
	}
	if m.Subject != w.subject || m.Sequence != w.seq || !m.Time.Equal(wt) || m.NumPending != w.pending ||
		m.LastSequence != w.lastSeq || m.HasPending != w.hasPending {
		t.Fatalf("%q: %+v; want %+v", block, m, w)
	}
	got := string(m.Header.Block())
	if got != w.header || m.Header.IsZero() != (w.header == "") {
		t.Fatalf("%q: stored header %q; want %q", block, got, w.header)
	}
	if err := proto.ValidateHeaderBlock(m.Header.Block()); err != nil {
		t.Fatalf("%q: stored header %q: %v", block, got, err)
	}
}

// TestSingle reads replies to one-message requests: the last field of each
// server key is the server's.
func TestSingle(t *testing.T) {
	tests := []struct {
		name  string
		block string
		want  want
	}{
		{"message without header", "NATS/1.0\r\n" + server + "\r\n",
			want{subject: "o.1", seq: 42, time: ts}},
		{"stored header", "NATS/1.0\r\nX-Own: 1\r\nX-Two:  b\r\n" + server + "\r\n",
			want{subject: "o.1", seq: 42, time: ts, header: "NATS/1.0\r\nX-Own: 1\r\nX-Two:  b\r\n\r\n"}},
		{"stored fields named like the server's", "NATS/1.0\r\nNats-Sequence: nope\r\nNats-Subject: o.2\r\n" + server + "\r\n",
			want{subject: "o.1", seq: 42, time: ts, header: "NATS/1.0\r\nNats-Sequence: nope\r\nNats-Subject: o.2\r\n\r\n"}},
		{"batch fields stay", "NATS/1.0\r\n" + batch + "\r\n",
			want{subject: "o.1", seq: 42, time: ts, header: "NATS/1.0\r\nNats-Num-Pending: 7\r\nNats-Last-Sequence: 41\r\n\r\n"}},
		// A stored field after a server field (no server sends it): the
		// header is copied without the server's fields.
		{"interleaved", "NATS/1.0\r\nNats-Subject: o.1\r\nX-Own: 1\r\nNats-Sequence: 42\r\n\r\n",
			want{subject: "o.1", seq: 42, header: "NATS/1.0\r\nX-Own: 1\r\n\r\n"}},
		{"no time stamp, no stream", "NATS/1.0\r\nNats-Subject: o.1\r\nNats-Sequence: 42\r\n\r\n",
			want{subject: "o.1", seq: 42}},
		{"empty subject", "NATS/1.0\r\nNats-Subject:\r\nNats-Sequence: 42\r\n\r\n",
			want{seq: 42}},
		{"missing subject", "NATS/1.0\r\nNats-Sequence: 42\r\n\r\n", fails(directget.Subject, true)},
		{"missing sequence", "NATS/1.0\r\nNats-Subject: o.1\r\n\r\n", fails(directget.Sequence, true)},
		{"bad sequence", "NATS/1.0\r\nNats-Subject: o.1\r\nNats-Sequence: -1\r\n\r\n", fails(directget.Sequence, false)},
		{"sequence overflow", "NATS/1.0\r\nNats-Subject: o.1\r\nNats-Sequence: 18446744073709551616\r\n\r\n", fails(directget.Sequence, false)},
		{"bad time stamp", "NATS/1.0\r\nNats-Subject: o.1\r\nNats-Sequence: 1\r\nNats-Time-Stamp: never\r\n\r\n", fails(directget.TimeStamp, false)},
		{"404", "NATS/1.0 404 Message Not Found\r\n\r\n", fails(directget.Subject, true)},
		{"no fields", "NATS/1.0\r\n\r\n", fails(directget.Subject, true)},
		{"no block", "", noHeader},
		{"garbage", "HTTP/1.1 200 OK\r\n\r\n", noHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r directget.Reply
			r.Parse([]byte(tt.block))
			m, err := r.Single()
			check(t, tt.block, m, err, tt.want)
		})
	}
}

// TestBatch reads replies of batch requests: the server's fields are the
// final run of server keys.
func TestBatch(t *testing.T) {
	tests := []struct {
		name  string
		block string
		want  want
	}{
		{"message without header", "NATS/1.0\r\n" + batch + "\r\n",
			want{subject: "o.1", seq: 42, time: ts, pending: 7, lastSeq: 41, hasPending: true}},
		{"stored header", "NATS/1.0\r\nX-Own: 1\r\n" + batch + "\r\n",
			want{subject: "o.1", seq: 42, time: ts, pending: 7, lastSeq: 41, hasPending: true, header: "NATS/1.0\r\nX-Own: 1\r\n\r\n"}},
		{"stored fields named like the server's", "NATS/1.0\r\nNats-Num-Pending: x\r\nX-Own: 1\r\n" + batch + "\r\n",
			want{subject: "o.1", seq: 42, time: ts, pending: 7, lastSeq: 41, hasPending: true,
				header: "NATS/1.0\r\nNats-Num-Pending: x\r\nX-Own: 1\r\n\r\n"}},
		// Server keys at the end of the stored header cannot be told
		// from the server's: they go with the run.
		{"stored server key last", "NATS/1.0\r\nX-Own: 1\r\nNats-Subject: o.2\r\n" + batch + "\r\n",
			want{subject: "o.1", seq: 42, time: ts, pending: 7, lastSeq: 41, hasPending: true, header: "NATS/1.0\r\nX-Own: 1\r\n\r\n"}},
		// A server before 2.11 answers with a one-message reply.
		{"no batch fields", "NATS/1.0\r\n" + server + "\r\n", want{subject: "o.1", seq: 42, time: ts}},
		{"subject before a stored field", "NATS/1.0\r\nNats-Subject: o.1\r\nX-Own: 1\r\nNats-Sequence: 42\r\n\r\n",
			fails(directget.Subject, true)},
		{"empty subject", "NATS/1.0\r\nNats-Subject:\r\nNats-Sequence: 42\r\n\r\n", fails(directget.Subject, true)},
		{"missing sequence", "NATS/1.0\r\nNats-Subject: o.1\r\n\r\n", fails(directget.Sequence, true)},
		{"bad sequence", "NATS/1.0\r\nNats-Subject: o.1\r\nNats-Sequence: x\r\n\r\n", fails(directget.Sequence, false)},
		{"bad time stamp", "NATS/1.0\r\nNats-Subject: o.1\r\nNats-Sequence: 1\r\nNats-Time-Stamp: 2026-13-01T00:00:00Z\r\n\r\n",
			fails(directget.TimeStamp, false)},
		{"bad pending", "NATS/1.0\r\nNats-Subject: o.1\r\nNats-Sequence: 1\r\nNats-Num-Pending: \r\n\r\n", fails(directget.NumPending, false)},
		{"bad last sequence", "NATS/1.0\r\nNats-Subject: o.1\r\nNats-Sequence: 1\r\nNats-Last-Sequence: +1\r\n\r\n",
			fails(directget.LastSequence, false)},
		{"408", "NATS/1.0 408 Bad Request\r\n\r\n", fails(directget.Subject, true)},
		{"no block", "", noHeader},
		{"short block", "NATS/1.0\r\n", noHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r directget.Reply
			r.Parse([]byte(tt.block))
			m, err := r.Batch()
			check(t, tt.block, m, err, tt.want)
		})
	}
}

// TestCutKeepsViews: the in-place cut leaves the values read before it
// intact, the subject included, even when the first server field is the
// subject itself.
func TestCutKeepsViews(t *testing.T) {
	reads := []struct {
		name  string
		read  func(*directget.Reply) (directget.Msg, error)
		block string
	}{
		{"Single", (*directget.Reply).Single, "NATS/1.0\r\nX-Own: 1\r\nNats-Subject: o.1\r\nNats-Sequence: 42\r\n\r\n"},
		{"Single", (*directget.Reply).Single, "NATS/1.0\r\nX-Own: 1\r\nNs: x\r\n" + server + "\r\n"},
		{"Batch", (*directget.Reply).Batch, "NATS/1.0\r\nX-Own: 1\r\nNats-Subject: o.1\r\nNats-Sequence: 42\r\n\r\n"},
		{"Batch", (*directget.Reply).Batch, "NATS/1.0\r\nX-Own: 1\r\nNs: x\r\n" + batch + "\r\n"},
	}
	for _, tt := range reads {
		b := []byte(tt.block)
		var r directget.Reply
		r.Parse(b)
		m, err := tt.read(&r)
		if err != nil {
			t.Fatalf("%s %q: %v", tt.name, tt.block, err)
		}
		if m.Subject != "o.1" {
			t.Fatalf("%s %q: subject %q after the cut", tt.name, tt.block, m.Subject)
		}
		if &m.Header.Block()[0] != &b[0] {
			t.Fatalf("%s %q: the stored header is not a view of the block", tt.name, tt.block)
		}
	}
}

// TestHostile feeds generated blocks, valid and not, to Parse, Single and
// Batch: none panics, and every failure is ErrNoHeader or an *Error.
func TestHostile(t *testing.T) {
	parts := []string{"NATS/1.0", " 404", " 204 EOB", "\r\n", "\n", "\r", ":", " ", "\t", "X-Own", "KV-Operation",
		"Nats-Stream", "Nats-Subject", "Nats-Sequence", "Nats-Time-Stamp", "Nats-Num-Pending", "Nats-Last-Sequence",
		"42", "-1", "18446744073709551615", "18446744073709551616", ts, "never", "o.1", "\x00", "\xff"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b []byte
		if rng.IntN(2) == 0 {
			b = append(b, "NATS/1.0\r\n"...)
		}
		for range rng.IntN(24) {
			b = append(b, parts[rng.IntN(len(parts))]...)
		}
		for _, read := range []func(*directget.Reply) (directget.Msg, error){(*directget.Reply).Single, (*directget.Reply).Batch} {
			block := slices.Clone(b)
			var r directget.Reply
			r.Parse(block, "KV-Operation", "X-Own")
			m, err := read(&r)
			var e *directget.Error
			switch {
			case err == nil:
				if err := proto.ValidateHeaderBlock(block); err == nil && !m.Header.IsZero() {
					if err := proto.ValidateHeaderBlock(m.Header.Block()); err != nil {
						t.Fatalf("%q: stored header %q of a valid block: %v", b, m.Header.Block(), err)
					}
				}
			case errors.Is(err, directget.ErrNoHeader), errors.As(err, &e):
			default:
				t.Fatalf("%q: untyped error %v", b, err)
			}
		}
	}
}
