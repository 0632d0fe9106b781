package pull_test

// Tier 1 timer test of the heartbeat monitor (RELIABILITY.md d.5): a
// testing/synctest bubble, a scripted JetStream server on an in-memory
// pipe (internal/memnet), exact fake-clock timings.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/memnet"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
	"github.com/natsio/natsio/pull"
)

const (
	stInfo = `{"server_id":"NSYNCTEST","server_name":"synctest","version":"2.15.2","proto":1,` +
		`"go":"go1.26","host":"fake","port":4222,"headers":true,"max_payload":1048576,"jetstream":true}`
	stConsumerInfo = `{"type":"io.nats.jetstream.api.v1.consumer_info_response","stream_name":"S","name":"C",` +
		`"created":"2000-01-01T00:00:00Z","config":{"durable_name":"C","deliver_policy":"all","ack_policy":"explicit"},` +
		`"delivered":{"consumer_seq":0,"stream_seq":0},"ack_floor":{"consumer_seq":0,"stream_seq":0},` +
		`"num_ack_pending":0,"num_redelivered":0,"num_waiting":0,"num_pending":0,"ts":"2000-01-01T00:00:00Z"}`
	stNext      = "$JS.API.CONSUMER.MSG.NEXT.S.C"
	stInfoSubj  = "$JS.API.CONSUMER.INFO.S.C"
	stHeartbeat = "NATS/1.0 100 Idle Heartbeat\r\n\r\n"
)

// stPull is a pull request the server received, with its fake time.
type stPull struct {
	reply, body string
	at          time.Duration
}

// stJS is a minimal JetStream server for one consumer, S/C: it answers
// PINGs and CONSUMER.INFO, records pulls, and sends what the test asks to
// the client's subscriptions.
type stJS struct {
	c     *memnet.Conn
	start time.Time
	pulls chan stPull

	mu   sync.Mutex
	subs map[uint64]string // sid → subject
}

// stMatch reports whether subject matches the subscription subject pat.
func stMatch(pat, subject string) bool {
	p, s := strings.Split(pat, "."), strings.Split(subject, ".")
	for i, tok := range p {
		if tok == ">" {
			return len(s) > i
		}
		if i >= len(s) || tok != "*" && tok != s[i] {
			return false
		}
	}
	return len(p) == len(s)
}

// sendTo delivers a message with the raw header block hdr (none if empty)
// to the subscription matching subject.
func (j *stJS) sendTo(subject, hdr string, payload []byte) error {
	j.mu.Lock()
	var sid uint64
	for id, pat := range j.subs {
		if stMatch(pat, subject) {
			sid = id
			break
		}
	}
	j.mu.Unlock()
	if sid == 0 {
		return fmt.Errorf("no subscription for %s", subject)
	}
	var b []byte
	if hdr == "" {
		b = proto.AppendMsg(nil, subject, sid, "", payload)
	} else {
		b = proto.AppendHMsg(nil, subject, sid, "", []byte(hdr), payload)
	}
	_, err := j.c.Write(b)
	return err
}

// serve runs the server side of the connection until the client closes it.
func (j *stJS) serve() error {
	p := proto.Parser{ClientOps: true}
	buf := make([]byte, 32<<10)
	handshake := 0
	if _, err := j.c.Write(proto.AppendInfo(nil, []byte(stInfo))); err != nil {
		return err
	}
	for {
		op, err := p.Next()
		if err != nil {
			return err
		}
		if op == nil {
			n, err := j.c.Read(buf)
			if n > 0 {
				p.Feed(buf[:n])
				continue
			}
			return err
		}
		switch op.Kind {
		case proto.KindConnect:
			handshake++
		case proto.KindPing:
			if _, err := j.c.Write(proto.AppendPong(nil)); err != nil {
				return err
			}
		case proto.KindSub:
			j.mu.Lock()
			j.subs[op.SID] = string(op.Subject)
			j.mu.Unlock()
		case proto.KindUnsub:
			j.mu.Lock()
			delete(j.subs, op.SID)
			j.mu.Unlock()
		case proto.KindPub, proto.KindHPub:
			switch subj, reply := string(op.Subject), string(op.Reply); subj {
			case stInfoSubj:
				if err := j.sendTo(reply, "", []byte(stConsumerInfo)); err != nil {
					return err
				}
			case stNext:
				j.pulls <- stPull{reply: reply, body: string(op.Payload), at: time.Since(j.start)}
			}
		}
	}
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
				j, cons := stStart(t)

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
					if err := j.sendTo(first.reply, stHeartbeat, nil); err != nil {
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

// stStart serves the scripted JetStream server over an in-memory pipe,
// inside the calling synctest bubble, and returns it with a consumer "C"
// of stream "S" bound through a connection to it. The connection, the
// pipe and the server's goroutine end at t's cleanup.
func stStart(t *testing.T) (*stJS, *pull.Consumer) {
	t.Helper()
	start := time.Now()
	l := memnet.Listen("fake:4222")
	t.Cleanup(func() { l.Close() })
	srv := make(chan *stJS, 1)
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	wg.Go(func() {
		c, err := l.AcceptContext(context.Background())
		if err != nil {
			return
		}
		defer c.Close()
		j := &stJS{c: c, start: start, pulls: make(chan stPull, 16), subs: map[uint64]string{}}
		srv <- j
		_ = j.serve()
	})
	nc, err := conn.Connect(context.Background(), "nats://fake:4222", conn.Dialer(l.Dial))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	j := <-srv
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := pull.Bind(context.Background(), js, "S", "C")
	if err != nil {
		t.Fatal(err)
	}
	return j, cons
}
