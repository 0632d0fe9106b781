package conn_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/proto"
)

// PublishLazy (Tier 1, fake clock): a lazily published message reaches the
// server exactly LazyDelay after the first of a group, all of the group in
// one go and in order; a message published normally meanwhile carries the
// lazy ones with it at once, ahead of it; 64 KiB queued lazily go at once;
// and Close writes what waits.
func TestPublishLazy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type seen struct {
			subj string
			at   time.Time
		}
		got := make(chan seen, 64)
		srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
			if handshake(c, nil) != nil {
				return
			}
			serveOps(c, nil, func(op *proto.Op) {
				if op.Kind == proto.KindPub {
					got <- seen{string(op.Subject), time.Now()}
				}
			})
		}))
		defer srv.stop()
		nc := srv.connect(t, conn.PingInterval(time.Hour), conn.MaxPingsOutstanding(2))
		defer nc.Close()
		// Let the flusher settle: a write it is about to make would carry
		// a lazy publish with it at once.
		synctest.Wait()

		// A group of lazy publishes, 100 µs apart: written together,
		// LazyDelay after the first.
		start := time.Now()
		for _, subj := range []string{"lazy.1", "lazy.2", "lazy.3"} {
			if err := nc.PublishUnobserved(subj, "", nil, []byte("x"), conn.WriteLazy); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Microsecond)
		}
		for _, want := range []string{"lazy.1", "lazy.2", "lazy.3"} {
			s := <-got
			if s.subj != want {
				t.Fatalf("got %s, want %s", s.subj, want)
			}
			if el := s.at.Sub(start); el != conn.LazyDelay {
				t.Fatalf("%s arrived after %v, want exactly LazyDelay (%v)", want, el, conn.LazyDelay)
			}
		}

		// A lazy publish followed by an ordinary one: both go at once,
		// in order.
		start = time.Now()
		if err := nc.PublishUnobserved("lazy.4", "", nil, nil, conn.WriteLazy); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Microsecond)
		if err := nc.Publish("eager.5", nil); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"lazy.4", "eager.5"} {
			s := <-got
			if s.subj != want || s.at.Sub(start) != 10*time.Microsecond {
				t.Fatalf("got %s after %v, want %s after 10µs", s.subj, s.at.Sub(start), want)
			}
		}
		// The lazy timer of lazy.4 was disarmed: nothing more arrives,
		// however long we wait.
		time.Sleep(10 * conn.LazyDelay)
		synctest.Wait()
		select {
		case s := <-got:
			t.Fatalf("unexpected %s", s.subj)
		default:
		}

		// 64 KiB queued lazily are enough for one large write: it goes at
		// once.
		start = time.Now()
		if err := nc.PublishUnobserved("lazy.big", "", nil, make([]byte, 70<<10), conn.WriteLazy); err != nil {
			t.Fatal(err)
		}
		if s := <-got; s.subj != "lazy.big" || s.at != start {
			t.Fatalf("got %s after %v, want lazy.big at once", s.subj, s.at.Sub(start))
		}

		// Checks and errors are Publish's.
		if err := nc.PublishUnobserved("bad subject", "", nil, nil, conn.WriteLazy); err == nil {
			t.Fatal("PublishLazy accepted a bad subject")
		}
		// Close writes what waits.
		if err := nc.PublishUnobserved("lazy.6", "", nil, nil, conn.WriteLazy); err != nil {
			t.Fatal(err)
		}
		nc.Close()
		if s := <-got; s.subj != "lazy.6" {
			t.Fatalf("after Close got %s", s.subj)
		}
		if err := nc.PublishUnobserved("lazy.7", "", nil, nil, conn.WriteLazy); err == nil {
			t.Fatal("PublishLazy after Close succeeded")
		}
	})
}
