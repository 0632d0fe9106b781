package extra_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// collect ranges over a batch get and returns the messages, or the error
// that ended it.
func collect(t *testing.T, it func(func(*jsapi.StoredMsg, error) bool)) ([]*jsapi.StoredMsg, error) {
	t.Helper()
	var out []*jsapi.StoredMsg
	for m, err := range it {
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}

func seqs(ms []*jsapi.StoredMsg) []uint64 {
	s := make([]uint64, len(ms))
	for i, m := range ms {
		s[i] = m.Sequence
	}
	return s
}

// getFixture stores 20 messages: odd sequences on g.b, even on g.a; every
// fifth carries a header.
func getFixture(t *testing.T) (*jsapi.JS, *jsapi.Stream) {
	_, _, js := startJS(t)
	st := stream(t, js, jsapi.StreamConfig{Name: "G", Subjects: []string{"g.>"}, AllowDirect: true})
	ctx := ctxT(t)
	for i := 1; i <= 20; i++ {
		subj := "g.a"
		if i%2 == 1 {
			subj = "g.b"
		}
		var h *proto.Header
		if i%5 == 0 {
			h = proto.NewHeader("X-N", fmt.Sprint(i))
		}
		if _, err := js.PublishMsg(ctx, subj, h, []byte(fmt.Sprintf("m%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	return js, st
}

func TestGetBatchFromSequence(t *testing.T) {
	js, _ := getFixture(t)
	ctx := ctxT(t)

	ms, err := collect(t, extra.GetBatch(ctx, js, "G", 6, extra.StartSeq(3)))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seqs(ms)) != "[3 4 5 6 7 8]" {
		t.Fatalf("sequences %v", seqs(ms))
	}
	for i, m := range ms {
		seq := uint64(3 + i)
		if string(m.Data) != fmt.Sprintf("m%02d", seq) || m.Time.IsZero() {
			t.Fatalf("message %d: %q at %v", seq, m.Data, m.Time)
		}
		if want := uint64(20) - seq; m.NumPending != want {
			t.Fatalf("message %d: pending %d, want %d", seq, m.NumPending, want)
		}
		if want := seq - 1; i == 0 && m.LastSequence != 0 || i > 0 && m.LastSequence != want {
			t.Fatalf("message %d: last sequence %d", seq, m.LastSequence)
		}
		wantSubj := "g.a"
		if seq%2 == 1 {
			wantSubj = "g.b"
		}
		if m.Subject != wantSubj {
			t.Fatalf("message %d: subject %q", seq, m.Subject)
		}
		if seq%5 == 0 {
			// Only the stored header is left.
			if m.Header.String() != "NATS/1.0\r\nX-N: 5\r\n\r\n" {
				t.Fatalf("message %d: header %q", seq, m.Header)
			}
			if err := m.Header.Validate(); err != nil {
				t.Fatal(err)
			}
		} else if !m.Header.IsZero() {
			t.Fatalf("message %d: header %q, want none", seq, m.Header)
		}
	}

	// Without a start: from the first message.
	ms, err = collect(t, extra.GetBatch(ctx, js, "G", 3))
	if err != nil || fmt.Sprint(seqs(ms)) != "[1 2 3]" {
		t.Fatalf("default start: %v %v", seqs(ms), err)
	}
	// Fewer messages left than asked: ends at the last one.
	ms, err = collect(t, extra.GetBatch(ctx, js, "G", 100, extra.StartSeq(18)))
	if err != nil || fmt.Sprint(seqs(ms)) != "[18 19 20]" || ms[2].NumPending != 0 {
		t.Fatalf("tail: %v %v", seqs(ms), err)
	}
	// Past the end.
	_, err = collect(t, extra.GetBatch(ctx, js, "G", 5, extra.StartSeq(21)))
	var se *jsapi.StatusError
	if !errors.Is(err, extra.ErrNoMessages) || !errors.As(err, &se) || se.Code != 404 {
		t.Fatalf("past the end: %v", err)
	}
}

func TestGetBatchFromTimeSubjectAndMaxBytes(t *testing.T) {
	js, st := getFixture(t)
	ctx := ctxT(t)

	m8, err := st.GetMsg(ctx, 8)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := collect(t, extra.GetBatch(ctx, js, "G", 3, extra.StartTime(m8.Time)))
	if err != nil || fmt.Sprint(seqs(ms)) != "[8 9 10]" {
		t.Fatalf("from time: %v %v", seqs(ms), err)
	}

	ms, err = collect(t, extra.GetBatch(ctx, js, "G", 100, extra.NextBySubject("g.b")))
	if err != nil || fmt.Sprint(seqs(ms)) != "[1 3 5 7 9 11 13 15 17 19]" {
		t.Fatalf("subject filter: %v %v", seqs(ms), err)
	}
	for _, m := range ms {
		if m.Subject != "g.b" {
			t.Fatalf("filtered message on %q", m.Subject)
		}
	}
	if ms[0].NumPending != 9 || ms[9].NumPending != 0 {
		t.Fatalf("pending with filter: %d, %d", ms[0].NumPending, ms[9].NumPending)
	}
	ms, err = collect(t, extra.GetBatch(ctx, js, "G", 4, extra.NextBySubject("g.*"), extra.StartSeq(10)))
	if err != nil || fmt.Sprint(seqs(ms)) != "[10 11 12 13]" {
		t.Fatalf("wildcard filter from 10: %v %v", seqs(ms), err)
	}
	ms, err = collect(t, extra.GetBatch(ctx, js, "G", 2, extra.NextBySubject("g.a"), extra.StartTime(m8.Time)))
	if err != nil || fmt.Sprint(seqs(ms)) != "[8 10]" {
		t.Fatalf("filter from time: %v %v", seqs(ms), err)
	}
	_, err = collect(t, extra.GetBatch(ctx, js, "G", 2, extra.NextBySubject("g.zzz")))
	if !errors.Is(err, extra.ErrNoMessages) {
		t.Fatalf("no match: %v", err)
	}

	// Each message counts subject (3) + payload (3) bytes: the server stops
	// once 14 are reached, after the third.
	ms, err = collect(t, extra.GetBatch(ctx, js, "G", 20, extra.MaxBytes(14)))
	if err != nil || fmt.Sprint(seqs(ms)) != "[1 2 3]" {
		t.Fatalf("max bytes: %v %v", seqs(ms), err)
	}
}

func TestGetBatchErrors(t *testing.T) {
	js, _ := getFixture(t)
	ctx := ctxT(t)
	stream(t, js, jsapi.StreamConfig{Name: "NODIRECT", Subjects: []string{"nd.>"}})

	invalid := map[string]func(func(*jsapi.StoredMsg, error) bool){
		"seq and time":    extra.GetBatch(ctx, js, "G", 5, extra.StartSeq(2), extra.StartTime(time.Now())),
		"batch 0":         extra.GetBatch(ctx, js, "G", 0),
		"seq 0":           extra.GetBatch(ctx, js, "G", 1, extra.StartSeq(0)),
		"bad subject":     extra.GetBatch(ctx, js, "G", 1, extra.NextBySubject("a..b")),
		"max bytes 0":     extra.GetBatch(ctx, js, "G", 1, extra.MaxBytes(0)),
		"zero option":     extra.GetBatch(ctx, js, "G", 1, extra.GetBatchOpt{}),
		"bad stream name": extra.GetBatch(ctx, js, "G.x", 1),
		"up to both":      extra.GetLastMsgsFor(ctx, js, "G", []string{"g.a"}, extra.UpToSeq(3), extra.UpToTime(time.Now())),
		"max msgs 0":      extra.GetLastMsgsFor(ctx, js, "G", []string{"g.a"}, extra.MaxMsgs(0)),
		"zero last":       extra.GetLastMsgsFor(ctx, js, "G", []string{"g.a"}, extra.GetLastMsgsOpt{}),
		"bad last subj":   extra.GetLastMsgsFor(ctx, js, "G", []string{"g. a"}),
	}
	for name, it := range invalid {
		if _, err := collect(t, it); !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := collect(t, extra.GetLastMsgsFor(ctx, js, "G", nil)); !errors.Is(err, extra.ErrNoSubjects) {
		t.Fatalf("no subjects: %v", err)
	}

	// A stream that does not exist, or does not allow direct get: nobody
	// answers.
	for _, name := range []string{"MISSING", "NODIRECT"} {
		_, err := collect(t, extra.GetBatch(ctx, js, name, 5))
		var se *jsapi.StatusError
		if !errors.Is(err, conn.ErrNoResponders) || !errors.As(err, &se) || se.Code != 503 {
			t.Fatalf("%s: %v", name, err)
		}
	}

	// Single use.
	it := extra.GetBatch(ctx, js, "G", 2)
	if ms, err := collect(t, it); err != nil || len(ms) != 2 {
		t.Fatalf("first range: %d %v", len(ms), err)
	}
	if _, err := collect(t, it); !errors.Is(err, extra.ErrIteratorUsed) {
		t.Fatalf("second range: %v", err)
	}

	// Breaking out early: the rest of the batch is dropped with the
	// subscription and the next request is unaffected.
	n := 0
	for _, err := range extra.GetBatch(ctx, js, "G", 20) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 2 {
			break
		}
	}
	if ms, err := collect(t, extra.GetBatch(ctx, js, "G", 20)); err != nil || len(ms) != 20 {
		t.Fatalf("after a break: %d %v", len(ms), err)
	}
}

func TestGetLastMsgsFor(t *testing.T) {
	_, _, js := startJS(t)
	st := stream(t, js, jsapi.StreamConfig{Name: "K", Subjects: []string{"k.>"}, AllowDirect: true})
	ctx := ctxT(t)
	// Three rounds over k.1..k.5: k.i's last message is 10+i.
	for round := range 3 {
		for i := 1; i <= 5; i++ {
			if _, err := js.Publish(ctx, fmt.Sprintf("k.%d", i), []byte(fmt.Sprintf("r%d", round))); err != nil {
				t.Fatal(err)
			}
		}
	}
	ms, err := collect(t, extra.GetLastMsgsFor(ctx, js, "K", []string{"k.3", "k.1"}))
	if err != nil || fmt.Sprint(seqs(ms)) != "[11 13]" {
		t.Fatalf("two subjects: %v %v", seqs(ms), err)
	}
	if ms[0].Subject != "k.1" || string(ms[0].Data) != "r2" || ms[0].NumPending != 1 || ms[1].NumPending != 0 {
		t.Fatalf("first: %+v", ms[0])
	}
	ms, err = collect(t, extra.GetLastMsgsFor(ctx, js, "K", []string{"k.*"}))
	if err != nil || fmt.Sprint(seqs(ms)) != "[11 12 13 14 15]" {
		t.Fatalf("wildcard: %v %v", seqs(ms), err)
	}
	ms, err = collect(t, extra.GetLastMsgsFor(ctx, js, "K", []string{"k.>"}, extra.UpToSeq(7)))
	if err != nil || fmt.Sprint(seqs(ms)) != "[3 4 5 6 7]" {
		t.Fatalf("up to 7: %v %v", seqs(ms), err)
	}
	m8, err := st.GetMsg(ctx, 8)
	if err != nil {
		t.Fatal(err)
	}
	ms, err = collect(t, extra.GetLastMsgsFor(ctx, js, "K", []string{"k.*"}, extra.UpToTime(m8.Time)))
	if err != nil || fmt.Sprint(seqs(ms)) != "[3 4 5 6 7]" {
		t.Fatalf("up to the time of 8: %v %v", seqs(ms), err)
	}
	ms, err = collect(t, extra.GetLastMsgsFor(ctx, js, "K", []string{"k.*"}, extra.MaxMsgs(2)))
	if err != nil || fmt.Sprint(seqs(ms)) != "[11 12]" {
		t.Fatalf("max 2: %v %v", seqs(ms), err)
	}
	_, err = collect(t, extra.GetLastMsgsFor(ctx, js, "K", []string{"k.none"}))
	if !errors.Is(err, extra.ErrNoMessages) {
		t.Fatalf("no match: %v", err)
	}
}

func TestGetLastMsgsForLimit(t *testing.T) {
	_, _, js := startJS(t)
	stream(t, js, jsapi.StreamConfig{Name: "L", Subjects: []string{"l.>"}, AllowDirect: true})
	ctx := ctxT(t)
	for i := range extra.MaxLastMsgsSubjects + 1 {
		if _, err := js.Publish(ctx, fmt.Sprintf("l.%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	// 1025 subjects match: the server refuses.
	_, err := collect(t, extra.GetLastMsgsFor(ctx, js, "L", []string{"l.*"}))
	var se *jsapi.StatusError
	if !errors.Is(err, extra.ErrTooManyResults) || !errors.As(err, &se) || se.Code != 413 {
		t.Fatalf("1025 matches: %v", err)
	}
	// 1024 match: fine, even with a batch limit.
	subjects := make([]string, extra.MaxLastMsgsSubjects)
	for i := range subjects {
		subjects[i] = fmt.Sprintf("l.%d", i)
	}
	ms, err := collect(t, extra.GetLastMsgsFor(ctx, js, "L", subjects))
	if err != nil || len(ms) != extra.MaxLastMsgsSubjects {
		t.Fatalf("1024 subjects: %d %v", len(ms), err)
	}
	// More than 1024 subjects named: refused before any request.
	_, err = collect(t, extra.GetLastMsgsFor(ctx, js, "L", append(subjects, "l.x")))
	if !errors.Is(err, extra.ErrTooManyResults) || !errors.Is(err, conn.ErrInvalidOption) || errors.As(err, &se) {
		t.Fatalf("1025 subjects named: %v", err)
	}
}
