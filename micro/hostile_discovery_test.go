package micro_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/micro"
)

// floodReplies makes another connection (a tenant) answer every request
// on subject with body, again and again, until stop.
func floodReplies(t *testing.T, url, subject string, body []byte) (stop func()) {
	t.Helper()
	return testutil.FloodReplies(t, connect(t, url), subject, body)
}

// identity is the JSON of a discovery reply of type typ.
func identity(typ string) []byte {
	return fmt.Appendf(nil, `{"type":%q,"name":"flood","id":"F1","version":"1.0.0","metadata":{}}`, typ)
}

// Under a flood of replies that never pauses, Ping, Infos and StatsOf end
// at ctx's deadline, as their stall never comes. Before, each kept
// gathering while replies came (42 s past a 2 s deadline, 4.3 M replies
// held).
func TestHostileDiscoveryFloodEndsAtDeadline(t *testing.T) {
	const (
		window = 500 * time.Millisecond
		// The figure asked is 100 ms; the bound leaves room for a
		// loaded machine and the race detector, far below the flood's
		// length.
		bound = time.Second
		// The flood stops at last, so that a call that does not end at
		// its deadline still ends and the test reports it.
		watchdog = 10 * time.Second
	)
	s := startServer(t)
	client := connect(t, s.URL())
	calls := []struct {
		verb string
		typ  string
		call func(ctx context.Context, opts ...micro.DiscoverOpt) (int, error)
	}{
		{"PING", micro.PingResponseType, func(ctx context.Context, opts ...micro.DiscoverOpt) (int, error) {
			r, err := micro.Ping(ctx, client, "", opts...)
			return len(r), err
		}},
		{"INFO", micro.InfoResponseType, func(ctx context.Context, opts ...micro.DiscoverOpt) (int, error) {
			r, err := micro.Infos(ctx, client, "", opts...)
			return len(r), err
		}},
		{"STATS", micro.StatsResponseType, func(ctx context.Context, opts ...micro.DiscoverOpt) (int, error) {
			r, err := micro.StatsOf(ctx, client, "", opts...)
			return len(r), err
		}},
	}
	for _, c := range calls {
		t.Run(c.verb, func(t *testing.T) {
			stop := floodReplies(t, s.URL(), "$SRV."+c.verb, identity(c.typ))
			ctx, cancel := context.WithTimeout(context.Background(), window)
			defer cancel()
			deadline, _ := ctx.Deadline()
			dog := time.AfterFunc(time.Until(deadline)+watchdog, stop)
			defer dog.Stop()
			// Bounds far above what the window can bring: the deadline
			// ends the call.
			n, err := c.call(ctx, micro.DiscoverLimits(1<<30, 1<<40))
			late := time.Since(deadline)
			stop()
			if err != nil {
				t.Fatalf("%s under a flood: %v after %d replies", c.verb, err, n)
			}
			if late > bound {
				t.Fatalf("%s returned %v after its deadline with %d replies, want within %v", c.verb, late, n, bound)
			}
			t.Logf("%s: returned %v after the deadline, %d replies kept", c.verb, late.Round(time.Millisecond), n)
		})
	}
}

// A flood is also bounded by count and bytes: the call returns the replies
// kept, never more than the bound, with ErrDiscoverLimit.
func TestHostileDiscoveryBoundsRepliesAndBytes(t *testing.T) {
	s := startServer(t)
	client := connect(t, s.URL())
	floodReplies(t, s.URL(), "$SRV.PING", identity(micro.PingResponseType))

	got, err := micro.Ping(ctxT(t), client, "")
	if !errors.Is(err, micro.ErrDiscoverLimit) || len(got) != micro.DefaultDiscoverMaxReplies {
		t.Fatalf("default bounds: %d replies, %v; want %d and ErrDiscoverLimit", len(got), err, micro.DefaultDiscoverMaxReplies)
	}
	got, err = micro.Ping(ctxT(t), client, "", micro.DiscoverLimits(100, 1<<20))
	if !errors.Is(err, micro.ErrDiscoverLimit) || len(got) != 100 {
		t.Fatalf("100 replies: %d, %v", len(got), err)
	}
	// Each reply holds well over 100 bytes decoded: a 4 KiB bound keeps
	// fewer than 41.
	got, err = micro.Ping(ctxT(t), client, "", micro.DiscoverLimits(1000, 4<<10))
	if !errors.Is(err, micro.ErrDiscoverLimit) || len(got) == 0 || len(got) > 40 {
		t.Fatalf("4 KiB: %d replies, %v", len(got), err)
	}
	if _, err := micro.Ping(ctxT(t), client, "", micro.DiscoverLimits(0, 1)); !errors.Is(err, micro.ErrInvalidConfig) {
		t.Fatalf("zero replies: %v", err)
	}
}

// One reply can be large: an INFO of 1,000 KiB of empty endpoints decodes
// to about 30 MB. A reply over MaxDiscoverReply is refused undecoded, and
// what a reply decodes to counts against the byte bound.
func TestHostileDiscoveryLargeReply(t *testing.T) {
	s := startServer(t)
	client := connect(t, s.URL())
	endpoints := func(size int) []byte {
		head := `{"type":"` + micro.InfoResponseType + `","name":"big","id":"B1","version":"1.0.0","endpoints":[`
		n := (size - len(head) - 2) / 3
		return []byte(head + strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]}")
	}
	tenant := connect(t, s.URL())
	body := endpoints(1000 << 10)
	if _, err := tenant.SubscribeFunc("$SRV.INFO", func(m *conn.Msg) { _ = m.Respond(body) }); err != nil {
		t.Fatal(err)
	}
	if err := tenant.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	got, err := micro.Infos(ctxT(t), client, "")
	if !errors.Is(err, micro.ErrBadResponse) || len(got) != 0 {
		t.Fatalf("a 1,000 KiB reply: %d kept, %v; want ErrBadResponse", len(got), err)
	}

	// 200 KiB is accepted, but decodes to far more than 1 MiB.
	body2 := endpoints(200 << 10)
	if _, err := tenant.SubscribeFunc("$SRV.INFO.big", func(m *conn.Msg) { _ = m.Respond(body2) }); err != nil {
		t.Fatal(err)
	}
	if err := tenant.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	got, err = micro.Infos(ctxT(t), client, "big", micro.DiscoverLimits(10, 1<<20))
	if !errors.Is(err, micro.ErrDiscoverLimit) || len(got) != 0 {
		t.Fatalf("a 200 KiB reply under a 1 MiB bound: %d kept, %v; want ErrDiscoverLimit", len(got), err)
	}
	got, err = micro.Infos(ctxT(t), client, "big")
	if err != nil || len(got) != 1 || len(got[0].Endpoints) < 60000 {
		t.Fatalf("a 200 KiB reply under the default bounds: %d kept, %v", len(got), err)
	}
}
