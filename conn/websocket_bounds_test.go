package conn_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
)

// TestWSDeflatedPingFloodBounded: over WebSocket with
// permessage-deflate, a server sends compressed frames that each inflate
// to 4 MiB of PINGs, and never reads. The PINGs reach the same handler as
// over TCP: one queued PONG answers all those read before a write takes
// it, so what the client buffers stays bounded.
func TestWSDeflatedPingFloodBounded(t *testing.T) {
	const perFrame = 4 << 20 / len("PING\r\n")
	pings := bytes.Repeat([]byte("PING\r\n"), perFrame)
	flood := wsFrame(0xC2, wsTestDeflate(t, pings, false)) // FIN, RSV1 (compressed), binary
	info := `INFO {"server_id":"NWS","version":"2.15.2","proto":1,"headers":true,"max_payload":1048576}` + "\r\n"
	measured := make(chan struct{})
	var measuredOnce sync.Once
	measure := func() { measuredOnce.Do(func() { close(measured) }) }
	srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
		if err := wsAccept(c, req, wsTestPMC, wsFrame(0x82, []byte(info))); err != nil {
			return err
		}
		// CONNECT and PING, perhaps compressed, perhaps in one frame.
		if err := wsAnswerPing(c, br); err != nil {
			return fmt.Errorf("the handshake: %w", err)
		}
		// SUB done 1, then PING from Flush: answer it, then read no more.
		if err := wsAnswerPing(c, br); err != nil {
			return fmt.Errorf("the flush: %w", err)
		}
		for range 2 {
			if _, err := c.Write(flood); err != nil {
				return err
			}
		}
		if _, err := c.Write(wsFrame(0x82, []byte("MSG done 1 1\r\nx\r\n"))); err != nil {
			return err
		}
		<-measured
		return wsDrain(br)
	}))
	u := srv.wsURL()
	t.Cleanup(measure) // before the server's: a failed test must not leave it waiting
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		_ = c.(*net.TCPConn).SetWriteBuffer(4096)
		return c, nil
	}
	// Inflating and answering 1.4 million PINGs takes about 20 s under
	// the race detector on a loaded machine: the bound is a safety net.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nc, err := conn.Connect(ctx, u.String(), conn.WebSocketCompression(), conn.Dialer(dial), conn.PingInterval(time.Hour),
		conn.WriteTimeout(time.Hour), conn.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.Subscribe("done")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(ctx); err != nil {
		t.Fatal(err)
	}
	buffered := nc.Buffered()
	measure()
	t.Logf("%d PINGs in %d compressed bytes, never a byte read back: %d bytes buffered for the server", 2*perFrame, 2*len(flood), buffered)
	if buffered > len("PONG\r\n") {
		t.Fatalf("%d bytes buffered after %d PINGs from a server that does not read, want at most one PONG", buffered, 2*perFrame)
	}
	nc.Close()
	if err := srv.wsResult(t); err != nil {
		t.Fatal(err)
	}
}

// wsAnswerPing reads the client's frames, inflating compressed ones, until
// a PING has come, and answers it with a PONG.
func wsAnswerPing(c net.Conn, br *bufio.Reader) error {
	var got []byte
	for !bytes.Contains(got, []byte("PING\r\n")) {
		f, err := wsReadClientFrame(br)
		if err != nil {
			return err
		}
		p := f.payload
		if f.b0&0x40 != 0 {
			if p, err = wsTestInflate(p); err != nil {
				return err
			}
		}
		got = append(got, p...)
	}
	_, err := c.Write(wsFrame(0x82, []byte("PONG\r\n")))
	return err
}
