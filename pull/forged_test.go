package pull

// A tenant on the same account learns a consumer's pull reply subject by
// subscribing to $JS.API.CONSUMER.MSG.NEXT.> and publishes
// "409 Consumer Deleted" to it from a connection of its own, through a real
// nats-server with JetStream. The victim's loops must not end for it.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

const forged409 = "NATS/1.0 409 Consumer Deleted\r\n\r\n"

type forgeEnv struct {
	ctx context.Context
	nc  *conn.Conn
	js  *jsapi.JS
	c   *Consumer
	in  *injector
	spy *testutil.PullSpy // the attacker's client connection
	url string
}

func newForgeEnv(t *testing.T) *forgeEnv {
	t.Helper()
	s := natstest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	nc, err := conn.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	js, _ := jsapi.New(nc)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: jsapi.StorageMemory}); err != nil {
		t.Fatal(err)
	}
	info, err := js.CreateConsumer(ctx, "S", jsapi.ConsumerConfig{Durable: "V", AckPolicy: jsapi.AckExplicit})
	if err != nil {
		t.Fatal(err)
	}
	c, err := FromInfo(js, info)
	if err != nil {
		t.Fatal(err)
	}
	// The attacker: another connection that watches the pull requests.
	spy := testutil.NewPullSpy(t, s.URL())
	return &forgeEnv{ctx: ctx, nc: nc, js: js, c: c, in: newInjector(t, s.URL()), spy: spy, url: s.URL()}
}

func (e *forgeEnv) publish(t *testing.T, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if _, err := e.js.Publish(e.ctx, "s.x", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
}

type forgeItem struct {
	m   *jsapi.Msg
	err error
}

// readMessages runs Messages (acknowledging each message) until the test
// ends. It returns what Messages yields, the errors it reports to
// OnError, and receive, which fails the test unless the next n items are
// the messages from, from+1, ... in order.
func (e *forgeEnv) readMessages(t *testing.T) (items <-chan forgeItem, reported <-chan error, receive func(from, n int)) {
	rep := make(chan error, 64)
	out := make(chan forgeItem, 64)
	ctx, cancel := context.WithCancel(e.ctx)
	t.Cleanup(cancel)
	go func() {
		defer close(out)
		for m, err := range e.c.Messages(ctx, MaxMessages(10), Expires(time.Minute),
			OnError(func(err error) {
				select {
				case rep <- err:
				default:
				}
			})) {
			if m != nil {
				m.Ack()
			}
			out <- forgeItem{m, err}
		}
	}()
	receive = func(from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			select {
			case it := <-out:
				if it.err != nil || it.m == nil || string(it.m.Data) != fmt.Sprint(i) {
					t.Fatalf("Messages yielded %v %v; want message %d", it.m, it.err, i)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("message %d did not arrive", i)
			}
		}
	}
	return out, rep, receive
}

type fetchResult struct {
	msgs []*jsapi.Msg
	err  error
}

// fetchOne runs Fetch for one message (for at most 20 s) and delivers its
// result.
func (e *forgeEnv) fetchOne() <-chan fetchResult {
	done := make(chan fetchResult, 1)
	go func() {
		fctx, fcancel := context.WithTimeout(e.ctx, 20*time.Second)
		defer fcancel()
		msgs, err := e.c.Fetch(fctx, 1)
		done <- fetchResult{msgs, err}
	}()
	return done
}

// Messages: forged statuses are ignored (and reported to OnError as
// ErrUnconfirmedStatus) while consumer info says the consumer exists, and
// the loop keeps receiving; a real deletion still ends it with
// ErrConsumerDeleted.
func TestForgedConsumerDeletedMessages(t *testing.T) {
	e := newForgeEnv(t)
	e.publish(t, 0, 3)
	items, reported, receive := e.readMessages(t)
	reply := e.spy.NextPull(t)
	awaitReport := func() {
		t.Helper()
		for {
			select {
			case err := <-reported:
				if errors.Is(err, ErrUnconfirmedStatus) {
					if errors.Is(err, ErrConsumerDeleted) {
						t.Fatalf("the report %v matches ErrConsumerDeleted", err)
					}
					return
				}
			case it := <-items:
				t.Fatalf("after the forged status Messages yielded %v %v", it.m, it.err)
			case <-time.After(10 * time.Second):
				t.Fatal("the forged status was not reported")
			}
		}
	}
	receive(0, 3)

	e.in.send(t, reply, forged409, "")
	awaitReport()
	e.publish(t, 3, 3)
	receive(3, 3)

	// A burst within a second of the answer: one more question, scheduled.
	for range 20 {
		e.in.send(t, reply, forged409, "")
	}
	awaitReport()
	e.publish(t, 6, 3)
	receive(6, 3)
	st := e.c.Stats()
	t.Logf("after 21 forged statuses: %d messages received, %d pulls", st.Messages, st.Pulls)

	// A real deletion ends the loop.
	if err := e.js.DeleteConsumer(e.ctx, e.c.Stream(), e.c.Name()); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case it, ok := <-items:
			if !ok {
				t.Fatal("Messages ended without an error")
			}
			if it.m != nil {
				continue
			}
			if !errors.Is(it.err, ErrConsumerDeleted) {
				t.Fatalf("Messages ended with %v; want ErrConsumerDeleted", it.err)
			}
			if _, ok := <-items; ok {
				t.Fatal("Messages went on after the deletion")
			}
			return
		case <-time.After(20 * time.Second):
			t.Fatal("the deletion did not end Messages")
		}
	}
}

// Fetch: a forged status does not end the Fetch; the message published
// after it is fetched.
func TestForgedConsumerDeletedFetch(t *testing.T) {
	e := newForgeEnv(t)
	done := e.fetchOne()
	reply := e.spy.NextPull(t)
	e.in.send(t, reply, forged409, "")
	e.in.send(t, reply, forged409, "")
	// The consumer info request the first status caused and the Fetch's
	// subscription share the victim's connection: once a round trip there
	// is done, the statuses may or may not have been read. Either way the
	// message published next must be what the Fetch returns.
	e.publish(t, 0, 1)
	r := <-done
	if r.err != nil || len(r.msgs) != 1 || string(r.msgs[0].Data) != "0" {
		t.Fatalf("Fetch: %d messages, %v; want message 0", len(r.msgs), r.err)
	}
}

// Messages: plain messages another tenant publishes to the pull's reply
// subject (no status, no readable $JS.ACK reply) are skipped, counted in
// Stats.Skipped and reported to OnError as ErrStrayMessage; the loop goes
// on with the server's messages.
func TestForgedPlainMessageMessages(t *testing.T) {
	e := newForgeEnv(t)
	e.publish(t, 0, 3)
	_, reported, receive := e.readMessages(t)
	reply := e.spy.NextPull(t)
	receive(0, 3)
	// Routed to the victim before the messages published next: the loop
	// meets them first.
	forged := e.spy.Publish(t, reply, []byte("forged"), testutil.PlainForgeries("S", "V")...)
	e.publish(t, 3, 3)
	receive(3, 3)
	if got := e.c.Stats().Skipped; got != uint64(forged) {
		t.Fatalf("Stats.Skipped = %d; want %d", got, forged)
	}
	strays := 0
	for len(reported) > 0 {
		if err := <-reported; errors.Is(err, ErrStrayMessage) {
			strays++
		}
	}
	if strays != forged {
		t.Fatalf("%d ErrStrayMessage reports; want %d", strays, forged)
	}
	if e.c.Stats().Messages != 6 {
		t.Fatalf("Stats.Messages = %d; want 6 (the forged ones are not received messages)", e.c.Stats().Messages)
	}
}

// Fetch: plain messages published to the pull's reply subject are skipped
// and counted; the Fetch returns the server's message.
func TestForgedPlainMessageFetch(t *testing.T) {
	e := newForgeEnv(t)
	done := e.fetchOne()
	reply := e.spy.NextPull(t)
	forged := e.spy.Publish(t, reply, []byte("forged"), testutil.PlainForgeries("S", "V")...)
	e.publish(t, 0, 1)
	r := <-done
	if r.err != nil || len(r.msgs) != 1 || string(r.msgs[0].Data) != "0" {
		t.Fatalf("Fetch: %d messages (%v), %v; want message 0", len(r.msgs), r.msgs, r.err)
	}
	if got := e.c.Stats().Skipped; got != uint64(forged) {
		t.Fatalf("Stats.Skipped = %d; want %d", got, forged)
	}
}
