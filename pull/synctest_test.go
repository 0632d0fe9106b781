package pull_test

// Tier 1 timer test of the heartbeat monitor (RELIABILITY.md d.5): a
// testing/synctest bubble, a scripted JetStream server (internal/fakeserver)
// on an in-memory listener (internal/memnet), exact fake-clock timings.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/memnet"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
	"github.com/natsio/natsio/pull"
)

const (
	// scriptedConsumerInfo is the CONSUMER.INFO answer for consumer C of
	// stream S.
	scriptedConsumerInfo = `{"type":"io.nats.jetstream.api.v1.consumer_info_response","stream_name":"S","name":"C",` +
		`"created":"2000-01-01T00:00:00Z","config":{"durable_name":"C","deliver_policy":"all","ack_policy":"explicit"},` +
		`"delivered":{"consumer_seq":0,"stream_seq":0},"ack_floor":{"consumer_seq":0,"stream_seq":0},` +
		`"num_ack_pending":0,"num_redelivered":0,"num_waiting":0,"num_pending":0,"ts":"2000-01-01T00:00:00Z"}`
	idleHeartbeatStatus = "NATS/1.0 100 Idle Heartbeat\r\n\r\n"
)

// pullRequest is a pull request the server received, with its fake time.
type pullRequest struct {
	reply, body string
	at          time.Duration
}

// scriptedConsumer is the server side of the fake-clock tests of pull: the
// scripted server (internal/fakeserver) on an in-memory listener, playing
// JetStream for one consumer, S/C. It answers CONSUMER.INFO and records
// every pull request; the test sends what it likes to the client's
// subscriptions (a heartbeat to a pull's reply subject, say).
type scriptedConsumer struct {
	c     *fakeserver.Client
	start time.Time
	pulls chan pullRequest
}

// The engine samples its activity counter every hb/8 from the start of
// Messages and reports ErrNoHeartbeat (and pulls again) at the first
// sample at least 2×hb after the sample that first saw the last activity;
// pull/messages.go documents "between 2 and 2¼ intervals after the last
// message or heartbeat". Heartbeats sent half a sample period off the
// sampling grid make the instant unambiguous: the silence is reported at
// exactly 2×hb + hb/16 after the last heartbeat. Without any heartbeat it
// is reported at exactly 2×hb after Messages started.
func TestSynctestHeartbeatMissedAt2x(t *testing.T) {
	const hb = time.Second
	const step = hb / 8
	for _, beats := range []int{0, 1, 5} {
		t.Run(fmt.Sprintf("%d-heartbeats", beats), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				j, cons := startScriptedConsumer(t)

				type report struct {
					err error
					at  time.Duration
				}
				reports := make(chan report, 16)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				t0 := time.Since(j.start)
				iterDone := make(chan error, 1)
				go func() {
					for m, err := range cons.Messages(ctx, pull.Heartbeat(hb), pull.Expires(30*time.Second),
						pull.OnError(func(err error) { reports <- report{err, time.Since(j.start)} })) {
						if err != nil {
							iterDone <- err
							return
						}
						iterDone <- fmt.Errorf("unexpected message %q", m.Subject)
						return
					}
					iterDone <- nil
				}()

				first := <-j.pulls
				if first.at != t0 || !strings.Contains(first.body, `"idle_heartbeat":1000000000`) {
					t.Fatalf("first pull %+v at %v, want at %v asking for 1s heartbeats", first, first.at, t0)
				}
				last := t0
				for k := 1; k <= beats; k++ {
					at := t0 + time.Duration(k)*hb + step/2
					time.Sleep(at - time.Since(j.start))
					if err := j.c.SendTo(first.reply, "", []byte(idleHeartbeatStatus), nil); err != nil {
						t.Fatal(err)
					}
					last = at
				}
				r := <-reports
				if !errors.Is(r.err, pull.ErrNoHeartbeat) {
					t.Fatalf("reported %v, want ErrNoHeartbeat", r.err)
				}
				silence := r.at - last
				want := 2 * hb
				if beats > 0 {
					want += step / 2
				}
				if silence < 2*hb || silence > 2*hb+hb/4 {
					t.Fatalf("missed heartbeats reported %v after the last one, outside [2×hb, 2¼×hb]", silence)
				}
				if silence != want {
					t.Fatalf("missed heartbeats reported %v after the last one, want exactly %v", silence, want)
				}
				// It pulls again at that very instant.
				again := <-j.pulls
				if again.at != r.at || again.reply == first.reply {
					t.Fatalf("re-pull %+v, want a new pull at %v", again, r.at)
				}
				cancel()
				if err := <-iterDone; !errors.Is(err, context.Canceled) {
					t.Fatalf("iterator ended with %v", err)
				}
				select {
				case r := <-reports:
					t.Fatalf("second report %v at %v before cancel", r.err, r.at)
				default:
				}
			})
		})
	}
}

// startScriptedConsumer serves the scripted JetStream server over an
// in-memory pipe, inside the calling synctest bubble, and returns it with
// a consumer "C" of stream "S" bound through a connection to it. The
// connection and the server end at t's cleanup.
func startScriptedConsumer(t *testing.T) (*scriptedConsumer, *pull.Consumer) {
	t.Helper()
	j := &scriptedConsumer{start: time.Now(), pulls: make(chan pullRequest, 16)}
	l := memnet.Listen("fake:4222")
	info := fakeserver.DefaultInfo().With("jetstream", true)
	s := fakeserver.Serve(t, l, fakeserver.WithHandler(fakeserver.Responder(info, func(op *proto.Op) *fakeserver.Reply {
		switch string(op.Subject) {
		case "$JS.API.CONSUMER.INFO.S.C":
			return &fakeserver.Reply{Body: []byte(scriptedConsumerInfo)}
		case "$JS.API.CONSUMER.MSG.NEXT.S.C":
			j.pulls <- pullRequest{reply: string(op.Reply), body: string(op.Payload), at: time.Since(j.start)}
		}
		return nil
	})))
	nc, err := conn.Connect(context.Background(), s.URL(), conn.Dialer(l.Dial))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if j.c, err = s.Client(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	consInfo, err := js.Consumer(context.Background(), "S", "C")
	if err != nil {
		t.Fatal(err)
	}
	cons, err := pull.FromInfo(js, consInfo)
	if err != nil {
		t.Fatal(err)
	}
	return j, cons
}
