package ordered_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/proto"
	"github.com/natsio/natsio/pull"
)

// rawPublish sends one HPUB with a raw header block (a status line, which
// no client's header type writes) over a TCP connection of its own and
// waits for the server's PONG, so the message has been routed when it
// returns.
func rawPublish(t *testing.T, url, subject, hdr string, times int) {
	t.Helper()
	_, hp, _ := strings.Cut(url, "://")
	c, err := net.DialTimeout("tcp", hp, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("INFO: %q %v", line, err)
	}
	var b strings.Builder
	b.WriteString("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"protocol\":1}\r\n")
	for range times {
		fmt.Fprintf(&b, "HPUB %s %d %d\r\n%s\r\n", subject, len(hdr), len(hdr), hdr)
	}
	b.WriteString("PING\r\n")
	if _, err := c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("waiting for PONG: %v", err)
		}
		if line == "PONG\r\n" {
			return
		}
		if strings.HasPrefix(line, "-ERR") {
			t.Fatal(line)
		}
	}
}

// Another tenant that watches $JS.API.CONSUMER.MSG.NEXT.> publishes
// "409 Consumer Deleted" to an ordered consumer's pull inbox. The pull
// engine under the ordered consumer confirms such a status with consumer
// info before acting on it, so the ordered consumer neither ends nor
// recreates its server-side consumer, and goes on reading.
func TestForgedConsumerDeletedOrdered(t *testing.T) {
	e := newEnv(t, "memory")
	e.publish(t, "o.a", 3)
	spy, err := conn.Connect(e.ctx, e.s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Close()
	pulls := make(chan string, 1024)
	if _, err := spy.SubscribeFunc("$JS.API.CONSUMER.MSG.NEXT.>", func(m *conn.Msg) {
		select {
		case pulls <- m.Reply:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}

	oc := newOrdered(t, e.js, "O", ordered.Config{})
	var mu sync.Mutex
	var resets []error
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	type item struct {
		data string
		err  error
	}
	items := make(chan item, 64)
	go func() {
		defer close(items)
		for m, err := range oc.Messages(ctx, ordered.OnReset(func(reason error) {
			mu.Lock()
			resets = append(resets, reason)
			mu.Unlock()
		})) {
			it := item{err: err}
			if m != nil {
				it.data = string(m.Data)
			}
			items <- it
		}
	}()
	receive := func(n int) {
		t.Helper()
		for i := range n {
			select {
			case it := <-items:
				if it.err != nil || it.data != fmt.Sprint(i) {
					t.Fatalf("yielded %q %v; want %d", it.data, it.err, i)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("message %d did not arrive", i)
			}
		}
	}
	receive(3)
	var reply string
	select {
	case reply = <-pulls:
	case <-time.After(10 * time.Second):
		t.Fatal("the attacker saw no pull request")
	}
	rawPublish(t, e.s.URL(), reply, "NATS/1.0 409 Consumer Deleted\r\n\r\n", 5)
	e.publish(t, "o.a", 3)
	receive(3)
	mu.Lock()
	defer mu.Unlock()
	if len(resets) != 0 {
		t.Fatalf("the ordered consumer was reset by the forged status: %v", resets)
	}
}

// forgePlain publishes, from the attacker's client connection spy, plain
// messages (no status; replies that are not readable $JS.ACK subjects) to
// subject and waits until the server has routed them. It returns how many
// it sent.
func forgePlain(t *testing.T, ctx context.Context, spy *conn.Conn, subject string) int {
	t.Helper()
	h := &proto.Header{}
	h.Add("X-Forged", "1")
	replies := []string{"", "_INBOX.attacker", "JS.ACK.O.C.1.1.1.1700000000000000000.0", ""}
	for i, r := range replies {
		var hdr *proto.Header
		if i == len(replies)-1 {
			hdr = h // a header, no status line
		}
		if err := spy.PublishMsg(subject, r, hdr, []byte("forged")); err != nil {
			t.Fatal(err)
		}
	}
	if err := spy.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return len(replies)
}

// Another tenant that watches $JS.API.CONSUMER.MSG.NEXT.> publishes plain
// messages to an ordered consumer's pull inbox. The read skips them,
// counts them (Skipped, OnSkip with pull.ErrStrayMessage), is not reset,
// and goes on reading the stream in order.
func TestForgedPlainMessageOrdered(t *testing.T) {
	e := newEnv(t, "memory")
	e.publish(t, "o.a", 3)
	spy, err := conn.Connect(e.ctx, e.s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Close()
	pulls := make(chan string, 1024)
	if _, err := spy.SubscribeFunc("$JS.API.CONSUMER.MSG.NEXT.>", func(m *conn.Msg) {
		select {
		case pulls <- m.Reply:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}

	oc := newOrdered(t, e.js, "O", ordered.Config{})
	var mu sync.Mutex
	var resets, skips []error
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	type item struct {
		data string
		seq  uint64
		err  error
	}
	items := make(chan item, 64)
	go func() {
		defer close(items)
		for m, err := range oc.Messages(ctx, ordered.OnReset(func(reason error) {
			mu.Lock()
			resets = append(resets, reason)
			mu.Unlock()
		}), ordered.OnSkip(func(reason error) {
			mu.Lock()
			skips = append(skips, reason)
			mu.Unlock()
		})) {
			it := item{err: err}
			if m != nil {
				it.data = string(m.Data)
				md, _ := m.Metadata()
				it.seq = md.StreamSeq
			}
			items <- it
		}
	}()
	seq := uint64(1)
	receive := func(n int) {
		t.Helper()
		for i := range n {
			select {
			case it := <-items:
				if it.err != nil || it.data != fmt.Sprint(i) || it.seq != seq {
					t.Fatalf("yielded %q (stream seq %d) %v; want %d (stream seq %d)", it.data, it.seq, it.err, i, seq)
				}
				seq++
			case <-time.After(10 * time.Second):
				t.Fatalf("message %d did not arrive", i)
			}
		}
	}
	receive(3)
	var reply string
	select {
	case reply = <-pulls:
	case <-time.After(10 * time.Second):
		t.Fatal("the attacker saw no pull request")
	}
	forged := forgePlain(t, e.ctx, spy, reply)
	e.publish(t, "o.a", 3)
	receive(3)
	mu.Lock()
	defer mu.Unlock()
	if len(resets) != 0 {
		t.Fatalf("the ordered consumer was reset by the forged messages: %v", resets)
	}
	if oc.Skipped() != uint64(forged) || len(skips) != forged {
		t.Fatalf("Skipped %d, %d OnSkip calls; want %d", oc.Skipped(), len(skips), forged)
	}
	for _, r := range skips {
		if !errors.Is(r, pull.ErrStrayMessage) {
			t.Fatalf("OnSkip reason %v; want pull.ErrStrayMessage", r)
		}
	}
}
