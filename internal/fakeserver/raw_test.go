package fakeserver_test

import (
	"bufio"
	"errors"
	"testing"

	"github.com/natsio/natsio/internal/fakeserver"
)

// TestRawStream: with WithRawStream every byte the client sends reaches
// the handler through Client.Conn (none is taken by the server's reader,
// even bytes that are not NATS protocol), nothing is recorded, Next ends
// with the connection, and Done is closed once the handler hangs up.
func TestRawStream(t *testing.T) {
	got := make(chan string, 1)
	written := make(chan struct{})
	s := fakeserver.New(t, fakeserver.WithRawStream(), fakeserver.WithHandler(func(c *fakeserver.Client) {
		defer c.Close()
		<-written // a reader of the server's own would have had the bytes first
		br := bufio.NewReader(c.Conn())
		l, err := br.ReadString('\n')
		if err != nil {
			got <- "read: " + err.Error()
			return
		}
		got <- l
		_, _ = c.Conn().Write([]byte("HTTP/1.1 101 Switching Protocols\r\n"))
	}))
	rc := dial(t, s)
	rc.write("GET / HTTP/1.1\r\n")
	close(written)
	if l := <-got; l != "GET / HTTP/1.1\r\n" {
		t.Fatalf("handler read %q", l)
	}
	if l := rc.line(); l != "HTTP/1.1 101 Switching Protocols\r\n" {
		t.Fatalf("client read %q", l)
	}
	c, err := s.Client(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	if _, err := c.Next(ctxT(t)); !errors.Is(err, fakeserver.ErrClosed) {
		t.Fatalf("Next after the hang-up: %v, want ErrClosed", err)
	}
	if ops, perr := c.Ops(), s.ParseErrors(); len(ops) != 0 || len(perr) != 0 {
		t.Fatalf("recorded %d ops and parse errors %v from a raw stream", len(ops), perr)
	}
}
