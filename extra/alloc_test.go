//go:build !race

package extra_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// A batch get allocates per request, not per message, even when every
// message has a subject of its own: subjects and data are views of the
// replies, which belong to the receiver. The server runs in a child
// process, so that only the client's allocations are counted.
func TestGetBatchAllocsPerRequest(t *testing.T) {
	p := natstest.NewProcess(t, true)
	ctx := context.Background()
	js := newJS(t, connect(t, p.URL()))
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "B", Subjects: []string{"b.>"}, Storage: jsapi.StorageMemory, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	const n = 500
	for i := range n {
		if _, err := js.Publish(ctx, fmt.Sprintf("b.%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	get := func() {
		i := 0
		for sm, err := range extra.GetBatch(ctx, js, "B", n) {
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("b.%d", i); sm.Subject != want || sm.Sequence != uint64(i+1) {
				t.Fatalf("message %d: %q seq %d, want %q seq %d", i, sm.Subject, sm.Sequence, want, i+1)
			}
			i++
		}
		if i != n {
			t.Fatalf("got %d messages, want %d", i, n)
		}
	}
	get()
	// The check above formats each expected subject (one allocation per
	// message): count it apart.
	check := testing.AllocsPerRun(20, func() {
		for i := range n {
			_ = fmt.Sprintf("b.%d", i)
		}
	})
	total := testing.AllocsPerRun(20, get)
	if per := (total - check) / n; per > 0.1 {
		t.Fatalf("GetBatch of %d messages with distinct subjects: %.0f allocs (%.0f of them the test's), %.3f per message, want ≤ 0.1", n, total, check, per)
	} else {
		t.Logf("GetBatch of %d messages: %.0f allocs besides the test's (%.3f per message)", n, total-check, per)
	}
}
