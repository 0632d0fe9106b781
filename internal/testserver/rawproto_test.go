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
	// timeout, when set, replaces ioTimeout for reads (roundTrip).
	timeout time.Duration
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
	d := ioTimeout
	if c.timeout > 0 {
		d = c.timeout
	}
	c.conn.SetReadDeadline(time.Now().Add(d))
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
	_, body, err := c.roundTrip(subject, "", payload, ioTimeout)
	if err != nil {
		c.t.Fatalf("waiting for reply to %s: %v", subject, err)
	}
	return body
}

// roundTrip publishes payload (with the header block hdr when it is not
// empty) to subject with a fresh inbox as reply subject and waits up to
// timeout for the first reply. It returns the reply's header block and
// payload. A read timeout is returned as an error; the test fails on any
// other error or an -ERR line.
func (c *rawConn) roundTrip(subject, hdr string, payload []byte, timeout time.Duration) (string, []byte, error) {
	c.t.Helper()
	inbox := fmt.Sprintf("_INBOX.raw.%d", inboxSeq.Add(1))
	sid := inboxSeq.Add(1)
	pub := fmt.Sprintf("PUB %s %s %d\r\n%s\r\n", subject, inbox, len(payload), payload)
	if hdr != "" {
		pub = fmt.Sprintf("HPUB %s %s %d %d\r\n%s%s\r\n", subject, inbox, len(hdr), len(hdr)+len(payload), hdr, payload)
	}
	c.send(fmt.Sprintf("SUB %s %d\r\n%s", inbox, sid, pub))
	defer c.send(fmt.Sprintf("UNSUB %d\r\n", sid))
	c.timeout = timeout
	defer func() { c.timeout = 0 }()
	for {
		line, err := c.next()
		if err != nil {
			return "", nil, err
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
		hlen := 0
		if f[0] == "HMSG" {
			if hlen, err = strconv.Atoi(f[len(f)-2]); err != nil {
				c.t.Fatalf("bad %q", line)
			}
		}
		buf := make([]byte, total+2)
		c.conn.SetReadDeadline(time.Now().Add(timeout))
		if _, err := io.ReadFull(c.r, buf); err != nil {
			c.t.Fatalf("reading payload: %v", err)
		}
		return string(buf[:hlen]), buf[hlen:total], nil
	}
}

// jsPublish publishes payload to a stream subject with the message id msgID
// and returns the decoded publish ack. The connection must have been made
// with "no_responders": true. While the stream's interest has not reached
// this server yet (a new clustered stream), the server answers 503 at once
// or the publish goes unanswered; jsPublish then publishes again with the
// same id (the stream's duplicate window stores it once), polling every
// 50 ms, for up to ioTimeout.
func (c *rawConn) jsPublish(subject, msgID string, payload []byte) map[string]any {
	c.t.Helper()
	hdr := "NATS/1.0\r\nNats-Msg-Id: " + msgID + "\r\n\r\n"
	deadline := time.Now().Add(ioTimeout)
	attempts, last := 0, ""
	for time.Now().Before(deadline) {
		attempts++
		h, body, err := c.roundTrip(subject, hdr, payload, time.Second)
		switch {
		case err != nil:
			last = err.Error()
		case strings.HasPrefix(h, "NATS/1.0 503"):
			last = "503 no responders"
			time.Sleep(50 * time.Millisecond) // polling the routes, not synchronisation
		default:
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				c.t.Fatalf("decoding publish ack %q: %v", body, err)
			}
			if e, ok := m["error"]; ok {
				c.t.Fatalf("publish to %s: error %v", subject, e)
			}
			return m
		}
	}
	c.t.Fatalf("publish to %s: no ack after %d attempts in %v (last: %s)", subject, attempts, ioTimeout, last)
	return nil
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
