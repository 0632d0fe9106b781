package conn_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/natsio/natsio/conn"
)

// event wraps a delivered message, as a layer over conn would: its Msg is
// not its first field, so Next must find the event from where the Msg is.
type event struct {
	seq int // set by the shell: which shell this is
	conn.Msg
	handled bool
}

// eventShells carves events for SubscribeBatchesOf and counts fresh and
// reused ones; the reader goroutine calls it one call at a time.
type eventShells struct {
	arena         []event
	fresh, reused int
}

func (s *eventShells) shell(reuse *event) *event {
	if reuse != nil {
		s.reused++
		reuse.handled = false
		return reuse
	}
	if len(s.arena) == 0 {
		s.arena = make([]event, 16)
	}
	e := &s.arena[0]
	s.arena = s.arena[1:]
	s.fresh++
	e.seq = s.fresh
	return e
}

// Messages arrive in the caller's structs, owned or lent: every event Next
// returns holds its own message, in order; owned events stay intact after
// later batches, lent ones are recycled (the shell sees them again) and
// stay intact until the next Next.
func TestSubscribeBatchesOf(t *testing.T) {
	s := coreServer(t)
	pub := connect(t, s.URL())
	for _, lent := range []bool{false, true} {
		nc := connect(t, s.URL())
		var shells eventShells
		b, err := conn.SubscribeBatchesOf(nc, "of.data", lent, shells.shell)
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		const bursts, per = 50, 40
		var kept []*event
		seen := map[*event]bool{}
		next := 0
		for burst := range bursts {
			for i := range per {
				if err := pub.Publish("of.data", borrowPayload(burst*per+i)); err != nil {
					t.Fatal(err)
				}
			}
			for next < (burst+1)*per {
				batch, err := b.Next(ctxT(t))
				if err != nil {
					t.Fatalf("lent=%v after %d messages: %v", lent, next, err)
				}
				for _, e := range batch {
					if e.Subject != "of.data" || !bytes.Equal(e.Data, borrowPayload(next)) || e.seq == 0 || e.handled {
						t.Fatalf("lent=%v message %d: subject %q data %.20q seq %d handled %v", lent, next, e.Subject, e.Data, e.seq, e.handled)
					}
					e.handled = true
					if !lent {
						if seen[e] {
							t.Fatalf("an owned event was delivered twice")
						}
						seen[e] = true
						kept = append(kept, e)
					}
					next++
				}
			}
		}
		for i, e := range kept {
			if !bytes.Equal(e.Data, borrowPayload(i)) {
				t.Fatalf("owned message %d changed after later batches: %.20q", i, e.Data)
			}
		}
		b.Subscription().Unsubscribe()
		nc.Close()
		switch {
		case !lent && shells.reused != 0:
			t.Fatalf("owned: the shell was given %d events to reuse", shells.reused)
		case lent && (shells.reused == 0 || shells.fresh >= bursts*per):
			t.Fatalf("lent: %d fresh events, %d reused: nothing was recycled", shells.fresh, shells.reused)
		}
	}
}

// A shell that cannot work, or a T the connection cannot fill, is refused
// before anything is sent.
func TestSubscribeBatchesOfRejects(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	flushBytes := func() uint64 {
		before := nc.Stats().SocketBytesOut
		if err := nc.Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		return nc.Stats().SocketBytesOut - before
	}
	ping := flushBytes()
	type none struct{ _ int }
	type two struct {
		_ conn.Msg
		_ struct{ conn.Msg }
	}
	type pointer struct{ *conn.Msg }
	type nested struct {
		_ int
		e event
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, conn.ErrInvalidOption) {
			t.Errorf("%s: %v, want ErrInvalidOption", what, err)
		}
	}
	_, err := conn.SubscribeBatchesOf[event](nc, "rej", false, nil)
	check("nil shell", err)
	_, err = conn.SubscribeBatchesOf(nc, "rej", false, func(*none) *none { return new(none) })
	check("no Msg", err)
	_, err = conn.SubscribeBatchesOf(nc, "rej", true, func(*two) *two { return new(two) })
	check("two Msgs", err)
	_, err = conn.SubscribeBatchesOf(nc, "rej", false, func(*pointer) *pointer { return new(pointer) })
	check("a *Msg", err)
	if got := flushBytes(); got != ping {
		t.Fatalf("refused subscriptions wrote %d bytes more than a flush", got-ping)
	}
	// A Msg inside an embedded struct is found.
	b, err := conn.SubscribeBatchesOf(nc, "nested", false, func(*nested) *nested { return new(nested) })
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	nc.Publish("nested", []byte("n"))
	batch, err := b.Next(ctxT(t))
	if err != nil || len(batch) != 1 || string(batch[0].e.Data) != "n" {
		t.Fatalf("nested: %v %v", batch, err)
	}
}
