package pull

// Hostile suite: another tenant on the victim's account learns the pull
// inboxes from $JS.API.CONSUMER.MSG.NEXT.> and publishes forged statuses
// onto them from a connection of its own, through a real nats-server with
// JetStream. No single status ends a Messages loop or a Consume unless
// consumer info confirms its condition; an unknown code ends that pull
// only, counted, and the loop pulls again; Fetch may end with an error for
// its pull (its pull withdrawn at the server, so nothing is captured), but
// never a terminal one without confirmation.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
)

type forgedStatus struct {
	name, header string
	// perPull: Fetch may return it as the end of its pull (not terminal).
	perPull bool
}

var forgedStatuses = []forgedStatus{
	{name: "400 Bad Request", header: "NATS/1.0 400 Bad Request\r\n\r\n"},
	{name: "409 Consumer is push based", header: "NATS/1.0 409 Consumer is push based\r\n\r\n"},
	{name: "409 Exceeded MaxRequestBatch", header: "NATS/1.0 409 Exceeded MaxRequestBatch of 1\r\n\r\n"},
	{name: "409 Exceeded MaxRequestExpires", header: "NATS/1.0 409 Exceeded MaxRequestExpires of 1s\r\n\r\n"},
	// With counts that say the whole pull was unused: once taken for "no
	// pull can ever take the next message".
	{name: "409 Message Size Exceeds MaxBytes", header: "NATS/1.0 409 Message Size Exceeds MaxBytes\r\nNats-Pending-Messages: 10\r\nNats-Pending-Bytes: 0\r\n\r\n", perPull: true},
	{name: "412 Required Api Level", header: "NATS/1.0 412 Required Api Level\r\n\r\n"},
	{name: "418 unknown", header: "NATS/1.0 418 I'm a teapot\r\n\r\n", perPull: true},
	{name: "409 Consumer Deleted", header: "NATS/1.0 409 Consumer Deleted\r\n\r\n"},
	{name: "409 Leadership Change", header: "NATS/1.0 409 Leadership Change\r\n\r\n", perPull: true},
	{name: "503 No Responders", header: "NATS/1.0 503\r\n\r\n"},
	// Ends a Fetch early only when no-wait (the server sends a 404 to no
	// other pull, and a 408 only once the pull expired).
	{name: "404 No Messages", header: "NATS/1.0 404 No Messages\r\n\r\n"},
	{name: "408 Request Timeout", header: "NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 1\r\nNats-Pending-Bytes: 0\r\n\r\n"},
}

// forgeAll publishes the status onto first and every other pull inbox the
// attacker has seen so far (forge).
func (e *forgeEnv) forgeAll(t *testing.T, first string, header string) {
	t.Helper()
	e.forge(t, append([]string{first}, e.spy.Seen()...), header, 1)
}

// forge publishes the status times onto each of replies (a raw HPUB: no
// client's header type writes a status line) from a connection of its
// own, and waits until the server has routed them.
func (e *forgeEnv) forge(t *testing.T, replies []string, header string, times int) {
	t.Helper()
	c, rd := testutil.RawConn(t, e.url, 30*time.Second)
	defer c.Close()
	var b strings.Builder
	for _, r := range replies {
		for range times {
			fmt.Fprintf(&b, "HPUB %s %d %d\r\n%s\r\n", r, len(header), len(header), header)
		}
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	testutil.AwaitPong(t, c, rd)
}

// forgeMidway reads messages 0-2 (published already) with receive, forges
// the status onto the read's pull inboxes, publishes 3-5 and reads them:
// the read went on.
func (e *forgeEnv) forgeMidway(t *testing.T, header string, receive func(from, n int)) {
	t.Helper()
	reply := e.spy.NextPull(t)
	receive(0, 3)
	e.forgeAll(t, reply, header)
	e.publish(t, 3, 3)
	receive(3, 3)
}

func TestForgedStatusesDoNotEndMessages(t *testing.T) {
	for _, fs := range forgedStatuses {
		t.Run(fs.name, func(t *testing.T) {
			e := newForgeEnv(t)
			e.publish(t, 0, 3)
			items, reported, receive := e.readMessages(t)
			e.forgeMidway(t, fs.header, receive)
			select {
			case it := <-items:
				t.Fatalf("after the forged status Messages yielded %v %v", it.m, it.err)
			default:
			}
			st := e.c.Stats()
			t.Logf("OUTCOME Messages | %s | goes on; reported %v; unconfirmed %d, unknown %d, pulls %d",
				fs.name, drainReports(reported), st.Unconfirmed, st.UnknownStatuses, st.Pulls)
		})
	}
}

func TestForgedStatusesDoNotEndConsume(t *testing.T) {
	for _, fs := range forgedStatuses {
		t.Run(fs.name, func(t *testing.T) {
			e := newForgeEnv(t)
			e.publish(t, 0, 3)
			got := make(chan string, 64)
			reported := make(chan error, 64)
			cc, err := e.c.Consume(e.ctx, func(m *jsapi.Msg) {
				m.Ack()
				got <- string(m.Data)
			}, MaxMessages(10), Expires(time.Minute), OnError(func(err error) {
				select {
				case reported <- err:
				default:
				}
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Stop()
			receive := func(from, n int) {
				t.Helper()
				for i := from; i < from+n; i++ {
					select {
					case d := <-got:
						if d != fmt.Sprint(i) {
							t.Fatalf("handler got %q, want %d", d, i)
						}
					case <-cc.Closed():
						t.Fatalf("Consume ended with %v before message %d", cc.Err(), i)
					case <-time.After(10 * time.Second):
						t.Fatalf("message %d did not arrive", i)
					}
				}
			}
			e.forgeMidway(t, fs.header, receive)
			select {
			case <-cc.Closed():
				t.Fatalf("Consume ended with %v", cc.Err())
			default:
			}
			st := e.c.Stats()
			t.Logf("OUTCOME Consume | %s | goes on; reported %v; unconfirmed %d, unknown %d",
				fs.name, drainReports(reported), st.Unconfirmed, st.UnknownStatuses)
		})
	}
}

// Fetch: the forged status does not end it with a terminal error. Either
// the Fetch ignores it and returns the message published next, or it ends
// with the error of its pull (not terminal), and then its pull has been
// withdrawn: the message published next goes to the next Fetch at once,
// not to the abandoned pull until AckWait (30 s) ran out.
func TestForgedStatusesDoNotEndFetch(t *testing.T) {
	for _, fs := range forgedStatuses {
		t.Run(fs.name, func(t *testing.T) {
			e := newForgeEnv(t)
			done := e.fetchOne()
			reply := e.spy.NextPull(t)
			e.forgeAll(t, reply, fs.header)
			var r fetchResult
			if fs.perPull {
				// The Fetch ends with the status: wait for it before
				// publishing, so the message tests the withdrawal.
				r = <-done
			} else {
				e.publish(t, 0, 1)
				r = <-done
			}
			outcome := ""
			switch {
			case r.err == nil && len(r.msgs) == 1 && string(r.msgs[0].Data) == "0":
				outcome = "ignored; the message published next returned"
			case r.err != nil && len(r.msgs) == 0 && fs.perPull:
				var se *jsapi.StatusError
				if errors.As(r.err, &se) && claimsEnd(se.Kind) {
					t.Fatalf("Fetch ended with the terminal %v", r.err)
				}
				if errors.Is(r.err, ErrConsumerDeleted) || errors.Is(r.err, ErrPushConsumer) || errors.Is(r.err, ErrBadPull) {
					t.Fatalf("Fetch ended with the terminal %v", r.err)
				}
				e.publish(t, 0, 1)
				ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second) // far below AckWait
				m, err := e.c.Next(ctx)
				cancel()
				if err != nil || string(m.Data) != "0" {
					t.Fatalf("Fetch ended with %v; the next Next got %v, %v: the message was captured by the abandoned pull", r.err, m, err)
				}
				outcome = fmt.Sprintf("per-pull error (%v), not terminal; pull withdrawn, the next Next got the message", r.err)
			default:
				t.Fatalf("Fetch: %d messages, %v", len(r.msgs), r.err)
			}
			st := e.c.Stats()
			t.Logf("OUTCOME Fetch | %s | %s; unconfirmed %d, unknown %d", fs.name, outcome, st.Unconfirmed, st.UnknownStatuses)
		})
	}
}

// drainReports returns the distinct reports received so far.
func drainReports(ch <-chan error) []string {
	seen := map[string]bool{}
	var out []string
	for {
		select {
		case err := <-ch:
			if s := err.Error(); !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		default:
			return out
		}
	}
}

// A flood of forged statuses that end a pull with its counts (408 Request
// Timeout saying the whole pull is unused: it cannot be told from the
// server's) does not drive a pull loop: Messages pulls at once for the
// first, then at most once per pause however many arrive.
func TestForgedStatusFloodDoesNotDrivePulls(t *testing.T) {
	e := newForgeEnv(t)
	e.publish(t, 0, 3)
	_, _, receive := e.readMessages(t)
	reply := e.spy.NextPull(t)
	receive(0, 3)
	before := e.c.Stats().Pulls
	const forged = 50
	e.forge(t, []string{reply}, "NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 10\r\nNats-Pending-Bytes: 0\r\n\r\n", forged)
	// The loop has read them once a message published now arrives.
	e.publish(t, 3, 1)
	receive(3, 1)
	pulls := e.c.Stats().Pulls - before
	t.Logf("%d forged statuses: %d pulls", forged, pulls)
	if pulls > 2 {
		t.Fatalf("%d forged statuses made %d pulls; want at most 2 (one at once, one after the pause)", forged, pulls)
	}
}
