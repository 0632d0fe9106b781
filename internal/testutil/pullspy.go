package testutil

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// PullSpy plays another tenant on the victim's account: a client
// connection of its own that watches every JetStream pull request
// ($JS.API.CONSUMER.MSG.NEXT.>) and so learns the reply subjects, the
// victim's pull inboxes, to publish forged messages to.
type PullSpy struct {
	// Conn is the spy's connection, closed when the test ends.
	Conn  *conn.Conn
	pulls chan string
}

// NewPullSpy connects to url and subscribes to the pull requests; when it
// returns the subscription is in place, so every pull made afterwards is
// seen. Pulls beyond the first 1024 unread are dropped.
func NewPullSpy(t testing.TB, url string) *PullSpy {
	t.Helper()
	s := &PullSpy{Conn: Connect(t, url), pulls: make(chan string, 1024)}
	if _, err := s.Conn.SubscribeFunc("$JS.API.CONSUMER.MSG.NEXT.>", func(m *conn.Msg) {
		select {
		case s.pulls <- m.Reply:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	s.flush(t)
	return s
}

// NextPull returns the reply subject of the oldest pull request seen and
// not yet returned; it fails the test when none comes within 10 s.
func (s *PullSpy) NextPull(t testing.TB) string {
	t.Helper()
	select {
	case r := <-s.pulls:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the attacker saw no pull request")
		return ""
	}
}

// Seen returns the reply subjects of the pull requests seen and not yet
// returned, without waiting.
func (s *PullSpy) Seen() []string {
	var out []string
	for {
		select {
		case r := <-s.pulls:
			out = append(out, r)
		default:
			return out
		}
	}
}

// Forged is one message a PullSpy publishes: its reply subject and its
// header (nil: none).
type Forged struct {
	Reply  string
	Header *proto.Header
}

// PlainForgeries are plain messages (no status line) whose replies are not
// readable $JS.ACK subjects: none at all, an inbox, the $JS.ACK layout of
// stream and consumer without its "$", and none with a header. A reply
// starting with "$JS." is not among them: nats-server refuses it from a
// client, so only a hostile server can send such a message (ordered's
// TestOrderedUnreadableMetadataIsSkipped scripts one).
func PlainForgeries(stream, consumer string) []Forged {
	h := &proto.Header{}
	h.Add("X-Forged", "1")
	return []Forged{
		{Reply: ""},
		{Reply: "_INBOX.attacker"},
		{Reply: "JS.ACK." + stream + "." + consumer + ".1.1.1.1700000000000000000.0"},
		{Reply: "", Header: h},
	}
}

// Publish publishes body to subject once for each of msgs and waits until
// the server has routed them (a flush). It returns how many it sent.
func (s *PullSpy) Publish(t testing.TB, subject string, body []byte, msgs ...Forged) int {
	t.Helper()
	for _, f := range msgs {
		if err := s.Conn.PublishMsg(subject, f.Reply, f.Header, body); err != nil {
			t.Fatal(err)
		}
	}
	s.flush(t)
	return len(msgs)
}

func (s *PullSpy) flush(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Conn.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}
