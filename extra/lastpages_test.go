package extra_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/jsapi"
)

// TestGetLastMsgsForPages: with MaxBytes the server answers a multi_last
// request in pages and the iterator requests each next page itself, up to
// the first reply's snapshot sequence: every subject's last message comes
// once, in stream order, LastSequence chains across pages, and a message
// stored between two pages is not mixed in. MaxMsgs still caps the total.
func TestGetLastMsgsForPages(t *testing.T) {
	_, nc, js := startJS(t)
	stream(t, js, jsapi.StreamConfig{Name: "P", Subjects: []string{"p.>"}, AllowDirect: true})
	ctx := ctxT(t)
	val := make([]byte, 100)
	for i := range 10 {
		if _, err := js.Publish(ctx, fmt.Sprintf("p.%d", i), val); err != nil {
			t.Fatal(err)
		}
	}
	out := nc.Stats().OutMsgs
	var got []uint64
	var prev uint64
	for m, err := range extra.GetLastMsgsFor(ctx, js, "P", []string{"p.*"}, extra.PageBytes(250)) {
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		if m.LastSequence != prev {
			t.Fatalf("message %d: LastSequence %d, want %d", m.Sequence, m.LastSequence, prev)
		}
		prev = m.Sequence
		got = append(got, m.Sequence)
		if len(got) == 1 {
			// Stored after the first page was computed: not in the answer.
			if _, err := js.Publish(ctx, "p.9", val); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fmt.Sprint(got) != "[1 2 3 4 5 6 7 8 9 10]" {
		t.Fatalf("got %v, want 1..10", got)
	}
	// One publish of ours, and at least three page requests (about two
	// 100-byte messages fit in 250 bytes).
	if reqs := nc.Stats().OutMsgs - out - 1; reqs < 3 {
		t.Fatalf("%d direct get requests, want pages", reqs)
	}

	got = got[:0]
	for m, err := range extra.GetLastMsgsFor(ctx, js, "P", []string{"p.*"}, extra.PageBytes(250), extra.MaxMsgs(4)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.Sequence)
	}
	if fmt.Sprint(got) != "[1 2 3 4]" {
		t.Fatalf("MaxMsgs 4 over pages: %v", got)
	}
}

// TestGetLastMsgsForBadEOB: an end-of-batch marker that reports pending
// matches but not where the next page starts (no Nats-Last-Sequence or
// Nats-UpTo-Sequence) cannot be paged: jsapi.ErrBadResponse, after one
// request, rather than a guess or a silent stop.
func TestGetLastMsgsForBadEOB(t *testing.T) {
	bodies := make(chan string, 4)
	fs := fakeserver.New(t, fakeserver.WithHandler(fakeDirectGet([]byte("NATS/1.0 204 EOB\r\nNats-Num-Pending: 3\r\n\r\n"), bodies)))
	nc := connect(t, fs.URL())
	n := 0
	var err error
	for _, err = range extra.GetLastMsgsFor(ctxT(t), newJS(t, nc), "S", []string{"k.*"}) {
		if err != nil {
			break
		}
		n++
	}
	if !errors.Is(err, jsapi.ErrBadResponse) || n != 0 {
		t.Fatalf("%d messages, %v; want jsapi.ErrBadResponse", n, err)
	}
	if len(bodies) != 1 {
		t.Fatalf("%d requests, want 1", len(bodies))
	}
}
