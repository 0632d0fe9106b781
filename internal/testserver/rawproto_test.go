package testserver

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// ioTimeout bounds every raw read and write in the tests.
const ioTimeout = 15 * time.Second

// rawConn speaks just enough of the NATS text protocol to exercise the test
// servers without any client library.
type rawConn struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
}

var inboxSeq atomic.Int64

// hostPort strips the scheme from a nats:// or ws:// URL.
func hostPort(url string) string {
	_, hp, _ := strings.Cut(url, "://")
	return hp
}

func dialRaw(t testing.TB, url string) *rawConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", hostPort(url), ioTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawConn{t: t, conn: conn, r: bufio.NewReader(conn)}
}

// upgradeTLS wraps the connection in a TLS client (after INFO was read).
func (c *rawConn) upgradeTLS(cfg *tls.Config) error {
	cfg = cfg.Clone()
	cfg.ServerName = "127.0.0.1"
	tc := tls.Client(c.conn, cfg)
	tc.SetDeadline(time.Now().Add(ioTimeout))
	if err := tc.Handshake(); err != nil {
		return err
	}
	c.conn, c.r = tc, bufio.NewReader(tc)
	return nil
}

func (c *rawConn) readLine() (string, error) {
	c.conn.SetReadDeadline(time.Now().Add(ioTimeout))
	line, err := c.r.ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err
}

func (c *rawConn) send(s string) {
	c.t.Helper()
	c.conn.SetWriteDeadline(time.Now().Add(ioTimeout))
	if _, err := c.conn.Write([]byte(s)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// readInfo reads the INFO line the server sends first and decodes it.
func (c *rawConn) readInfo() map[string]any {
	c.t.Helper()
	line, err := c.readLine()
	if err != nil {
		c.t.Fatalf("reading INFO: %v", err)
	}
	return decodeInfo(c.t, line)
}

func decodeInfo(t testing.TB, line string) map[string]any {
	t.Helper()
	js, ok := strings.CutPrefix(line, "INFO ")
	if !ok {
		t.Fatalf("expected INFO, got %q", line)
	}
	var info map[string]any
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		t.Fatalf("decoding INFO %q: %v", js, err)
	}
	return info
}

// next returns the next line that is not a server PING (which it answers)
// or an async INFO.
func (c *rawConn) next() (string, error) {
	for {
		line, err := c.readLine()
		if err != nil {
			return "", err
		}
		switch {
		case line == "PING":
			c.send("PONG\r\n")
		case strings.HasPrefix(line, "INFO "):
		default:
			return line, nil
		}
	}
}

// connect sends CONNECT with the given extra fields and a PING and returns
// the server's answer to the PING ("PONG" or an -ERR line).
func (c *rawConn) connect(fields map[string]any) string {
	c.t.Helper()
	m := map[string]any{"verbose": false, "pedantic": false, "protocol": 1, "headers": true}
	for k, v := range fields {
		m[k] = v
	}
	js, err := json.Marshal(m)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send("CONNECT " + string(js) + "\r\nPING\r\n")
	line, err := c.next()
	if err != nil {
		c.t.Fatalf("waiting for PONG: %v", err)
	}
	return line
}

func (c *rawConn) mustConnect(fields map[string]any) {
	c.t.Helper()
	if got := c.connect(fields); got != "PONG" {
		c.t.Fatalf("CONNECT: expected PONG, got %q", got)
	}
}

// request publishes payload to subject with a fresh inbox as reply subject
// and returns the payload of the first reply.
func (c *rawConn) request(subject string, payload []byte) []byte {
	c.t.Helper()
	inbox := fmt.Sprintf("_INBOX.raw.%d", inboxSeq.Add(1))
	c.send(fmt.Sprintf("SUB %s 1\r\nPUB %s %s %d\r\n%s\r\n", inbox, subject, inbox, len(payload), payload))
	for {
		line, err := c.next()
		if err != nil {
			c.t.Fatalf("waiting for reply to %s: %v", subject, err)
		}
		if strings.HasPrefix(line, "-ERR") {
			c.t.Fatalf("request %s: %s", subject, line)
		}
		f := strings.Fields(line)
		if len(f) < 4 || (f[0] != "MSG" && f[0] != "HMSG") {
			continue
		}
		total, err := strconv.Atoi(f[len(f)-1])
		if err != nil {
			c.t.Fatalf("bad %q", line)
		}
		hdr := 0
		if f[0] == "HMSG" {
			if hdr, err = strconv.Atoi(f[len(f)-2]); err != nil {
				c.t.Fatalf("bad %q", line)
			}
		}
		buf := make([]byte, total+2)
		c.conn.SetReadDeadline(time.Now().Add(ioTimeout))
		if _, err := io.ReadFull(c.r, buf); err != nil {
			c.t.Fatalf("reading payload: %v", err)
		}
		c.send("UNSUB 1\r\n")
		return buf[hdr:total]
	}
}

// jsRequest sends a JetStream API request and decodes the JSON reply,
// failing the test when the reply carries an error.
func (c *rawConn) jsRequest(subject string, req any) map[string]any {
	c.t.Helper()
	var payload []byte
	if req != nil {
		var err error
		if payload, err = json.Marshal(req); err != nil {
			c.t.Fatal(err)
		}
	}
	reply := c.request(subject, payload)
	var m map[string]any
	if err := json.Unmarshal(reply, &m); err != nil {
		c.t.Fatalf("decoding %s reply %q: %v", subject, reply, err)
	}
	if e, ok := m["error"]; ok {
		c.t.Fatalf("%s: error %v", subject, e)
	}
	return m
}
