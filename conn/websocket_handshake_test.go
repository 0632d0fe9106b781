package conn_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
)

func TestWSAcceptKeyRFCExample(t *testing.T) {
	// RFC 6455 section 1.3.
	if got := conn.WSAcceptKey("dGhlIHNhbXBsZSBub25jZQ=="); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("wsAcceptKey = %q", got)
	}
}

func TestWSHandshakeRequest(t *testing.T) {
	for _, comp := range []bool{false, true} {
		t.Run(fmt.Sprintf("compression=%v", comp), func(t *testing.T) {
			srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
				var problems []string
				check := func(what, got, want string) {
					if got != want {
						problems = append(problems, fmt.Sprintf("%s = %q, want %q", what, got, want))
					}
				}
				check("method", req.Method, "GET")
				check("request URI", req.RequestURI, "/nats/ws?x=1")
				check("proto", req.Proto, "HTTP/1.1")
				check("Host", req.Host, "example.test:1234")
				check("Upgrade", req.Header.Get("Upgrade"), "websocket")
				check("Connection", req.Header.Get("Connection"), "Upgrade")
				check("Sec-WebSocket-Version", req.Header.Get("Sec-WebSocket-Version"), "13")
				check("Cookie", req.Header.Get("Cookie"), "jwt=abc")
				check("X-Test", strings.Join(req.Header.Values("X-Test"), ","), "a,b")
				wantExt := ""
				if comp {
					wantExt = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
				}
				check("Sec-WebSocket-Extensions", req.Header.Get("Sec-WebSocket-Extensions"), wantExt)
				key, err := base64.StdEncoding.DecodeString(req.Header.Get("Sec-WebSocket-Key"))
				if err != nil || len(key) != 16 {
					problems = append(problems, fmt.Sprintf("bad key %q", req.Header.Get("Sec-WebSocket-Key")))
				}
				if br.Buffered() != 0 {
					problems = append(problems, "client sent data before the handshake completed")
				}
				ext := ""
				if comp {
					ext = wsTestPMC
				}
				if err := wsAccept(c, req, ext, nil); err != nil {
					return err
				}
				if err := wsDrain(br); err != nil {
					return err
				}
				if problems != nil {
					return errors.New(strings.Join(problems, "; "))
				}
				return nil
			}))
			u := srv.wsURL()
			u.Path, u.RawQuery = "/nats/ws", "x=1"
			h := http.Header{}
			h.Set("Host", "example.test:1234")
			h.Set("Cookie", "jwt=abc")
			h.Add("X-Test", "a")
			h.Add("X-Test", "b")
			wc, _ := wsDial(t, u, conn.WSOptions{Compression: comp, Header: h})
			if conn.WSCompressed(wc) != comp {
				t.Fatalf("compress = %v, want %v", conn.WSCompressed(wc), comp)
			}
			wc.Close()
			if err := srv.wsResult(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWSHandshakeDefaultPath(t *testing.T) {
	srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		if req.RequestURI != "/" {
			return fmt.Errorf("request URI %q, want /", req.RequestURI)
		}
		if req.Host != c.LocalAddr().String() {
			return fmt.Errorf("Host %q, want %q", req.Host, c.LocalAddr())
		}
		if err := wsAccept(c, req, "", nil); err != nil {
			return err
		}
		return wsDrain(br)
	}))
	u := srv.wsURL()
	wsDial(t, u, conn.WSOptions{})
}

// Header tokens are matched case-insensitively and within lists.
func TestWSHandshakeLenientHeaders(t *testing.T) {
	srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		resp := "HTTP/1.1 101 Switching Protocols\r\nupgrade: WebSocket\r\nCONNECTION: keep-alive, UPGRADE\r\nsec-websocket-accept: " +
			conn.WSAcceptKey(req.Header.Get("Sec-WebSocket-Key")) + "\r\n" +
			"Sec-WebSocket-Extensions: PerMessage-Deflate;Server_No_Context_Takeover; server_max_window_bits=10\r\n\r\n"
		if _, err := c.Write([]byte(resp)); err != nil {
			return err
		}
		return wsDrain(br)
	}))
	u := srv.wsURL()
	wc, _ := wsDial(t, u, conn.WSOptions{Compression: true})
	if !conn.WSCompressed(wc) {
		t.Fatal("compression not negotiated")
	}
}

func TestWSHandshakeErrors(t *testing.T) {
	accept := func(req *http.Request) string { return conn.WSAcceptKey(req.Header.Get("Sec-WebSocket-Key")) }
	cases := []struct {
		name string
		comp bool
		resp func(req *http.Request) string
		want string
	}{
		{"bad accept", false, func(*http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
		}, "Sec-WebSocket-Accept"},
		{"missing accept", false, func(*http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
		}, "Sec-WebSocket-Accept"},
		{"non-101", false, func(*http.Request) string {
			return "HTTP/1.1 403 Forbidden\r\nContent-Length: 13\r\n\r\norigin denied"
		}, `"403 Forbidden": "origin denied"`},
		{"200 no body", false, func(*http.Request) string {
			return "HTTP/1.1 200 OK\r\n\r\n"
		}, "200 OK"},
		{"missing upgrade", false, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(req) + "\r\n\r\n"
		}, "Upgrade header"},
		{"connection keep-alive", false, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: keep-alive\r\nSec-WebSocket-Accept: " + accept(req) + "\r\n\r\n"
		}, "Connection header"},
		{"extension not offered", false, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(req) + "\r\n" + wsTestPMC + "\r\n"
		}, "not offered"},
		{"unknown extension", true, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(req) + "\r\nSec-WebSocket-Extensions: x-webkit-deflate-frame\r\n\r\n"
		}, "not offered"},
		{"context takeover", true, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(req) + "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"
		}, "server_no_context_takeover"},
		{"client window not offered", true, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(req) + "\r\nSec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_max_window_bits=9\r\n\r\n"
		}, "client_max_window_bits"},
		{"bad server window", true, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(req) + "\r\nSec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; server_max_window_bits=16\r\n\r\n"
		}, "server_max_window_bits"},
		{"huge headers", false, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nX-Big: " + strings.Repeat("a", 100<<10) + "\r\n\r\n"
		}, "exceed"},
		{"not http", false, func(*http.Request) string { return "SSH-2.0-OpenSSH_9.6\r\n\r\n" }, "reading response"},
		{"eof", false, func(*http.Request) string { return "" }, "EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
				// The client may hang up mid-response (huge headers).
				_, _ = c.Write([]byte(tc.resp(req)))
				if tc.name == "eof" {
					return nil
				}
				return wsDrain(br)
			}))
			u := srv.wsURL()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			wc, _, err := wsDialRaw(t, ctx, u, conn.WSOptions{Compression: tc.comp})
			if err == nil {
				wc.Close()
				t.Fatal("handshake succeeded")
			}
			if !errors.Is(err, conn.ErrWSHandshake) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want conn.ErrWSHandshake mentioning %q", err, tc.want)
			}
			t.Logf("%v", err)
			if err := srv.wsResult(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWSHandshakeBadOptions(t *testing.T) {
	u := &url.URL{Scheme: "ws", Host: "127.0.0.1:1"}
	for _, h := range []http.Header{
		{"Connection": {"close"}},
		{"sec-websocket-key": {"x"}},
		{"Sec-WebSocket-Extensions": {"permessage-deflate"}},
		{"Bad Name": {"x"}},
		{"X-Ok": {"a\r\nInjected: 1"}},
		{"Host": {"a b"}},
	} {
		c1, c2 := net.Pipe()
		_, err := conn.WSHandshake(context.Background(), c1, u, conn.WSOptions{Header: h})
		c1.Close()
		c2.Close()
		if !errors.Is(err, conn.ErrWSHandshake) {
			t.Errorf("header %v: err = %v, want conn.ErrWSHandshake", h, err)
		}
	}
	if _, err := conn.WSHandshake(context.Background(), nil, &url.URL{Path: "/"}, conn.WSOptions{}); !errors.Is(err, conn.ErrWSHandshake) {
		t.Errorf("no host: err = %v", err)
	}
}

func TestWSHandshakeContextCancel(t *testing.T) {
	got := make(chan struct{})
	srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		close(got) // never answer
		return wsDrain(br)
	}))
	u := srv.wsURL()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		var d net.Dialer
		c, err := d.DialContext(context.Background(), "tcp", u.Host)
		if err != nil {
			errc <- err
			return
		}
		defer c.Close()
		_, err = conn.WSHandshake(ctx, c, u, conn.WSOptions{})
		errc <- err
	}()
	<-got
	cancel()
	err := <-errc
	if !errors.Is(err, conn.ErrWSHandshake) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want conn.ErrWSHandshake and context.Canceled", err)
	}
}

func TestWSHandshakeContextDeadline(t *testing.T) {
	srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		return wsDrain(br) // never answer
	}))
	u := srv.wsURL()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, err := wsDialRaw(t, ctx, u, conn.WSOptions{})
	if !errors.Is(err, conn.ErrWSHandshake) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want conn.ErrWSHandshake and context.DeadlineExceeded", err)
	}
}

// Frames the server sends together with the 101 response reach Read.
func TestWSDataWithHandshakeResponse(t *testing.T) {
	srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		after := append(wsFrame(0x82, []byte("INFO {}\r\n")), wsFrame(0x88, []byte{0x03, 0xe8})...)
		if err := wsAccept(c, req, "", after); err != nil {
			return err
		}
		return wsDrain(br)
	}))
	u := srv.wsURL()
	wc, _ := wsDial(t, u, conn.WSOptions{})
	got, err := io.ReadAll(wc)
	if err != nil || string(got) != "INFO {}\r\n" {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
}
