package testutil

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// RawConn opens a plain TCP connection to the server at url, for writing
// protocol a client's API will not (an HPUB whose header block is a status
// line, say). It reads INFO, sends CONNECT with headers enabled and waits
// for the PONG of a PING, so the server has accepted the connection when
// it returns. Every read and write on it fails after deadline; the caller
// closes it and reads the rest through r.
func RawConn(t testing.TB, url string, deadline time.Duration) (c net.Conn, r *bufio.Reader) {
	t.Helper()
	_, hp, _ := strings.Cut(url, "://")
	c, err := net.DialTimeout("tcp", hp, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(deadline))
	r = bufio.NewReader(c)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
		c.Close()
		t.Fatalf("INFO: %q %v", line, err)
	}
	if _, err := fmt.Fprint(c, "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"protocol\":1}\r\n"); err != nil {
		c.Close()
		t.Fatal(err)
	}
	AwaitPong(t, c, r)
	return c, r
}

// AwaitPong sends PING on c and reads r until the server's PONG, so all
// c sent before has been processed; it fails the test on an -ERR or a
// read error (closing c).
func AwaitPong(t testing.TB, c net.Conn, r *bufio.Reader) {
	t.Helper()
	if _, err := fmt.Fprint(c, "PING\r\n"); err != nil {
		c.Close()
		t.Fatal(err)
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			c.Close()
			t.Fatalf("waiting for PONG: %v", err)
		}
		if line == "PONG\r\n" {
			return
		}
		if strings.HasPrefix(line, "-ERR") {
			c.Close()
			t.Fatal(line)
		}
	}
}
