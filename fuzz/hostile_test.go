package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fuzzref"
	"github.com/natsio/natsio/internal/wire"
	"github.com/natsio/natsio/proto"
)

// FuzzAsyncInfo sends each input as an INFO to a live connection
// (liveConn), followed by a PING. An INFO the reference accepts (JSON
// that decodes into conn.ServerInfo, with 0 < max_payload ≤ 64 MiB) is
// applied and the PING answered on the same connection, unless it
// announces lame duck mode (the client then moves to another server of
// its pool, if it has one, answering at most what it had already read);
// any other INFO makes the client drop the connection, as a
// protocol error, and reconnect. Either way the client never panics
// (connect_urls go through the pool's discovery, every gossiped address
// dialing the fake again).
func FuzzAsyncInfo(f *testing.F) {
	lc := newLiveConn(f)
	f.Fuzz(func(t *testing.T, info []byte) {
		// A CR or LF would end the INFO line: the parser's domain.
		text := bytes.Map(func(r rune) rune {
			if r == '\r' || r == '\n' {
				return ' '
			}
			return r
		}, info)
		frame := append(append([]byte("INFO "), text...), "\r\nPING\r\n"...)
		if err := lc.c.Send(frame); err != nil {
			t.Fatal(err)
		}
		_, err := lc.c.Expect(liveCtx(t), proto.KindPong)
		answered := err == nil
		var si conn.ServerInfo
		// The protocol parser trims the line as bytes.TrimSpace does
		// (vertical tabs and form feeds included) before the client
		// decodes it.
		valid := json.Unmarshal(bytes.TrimSpace(text), &si) == nil && si.MaxPayload > 0 && si.MaxPayload <= 64<<20
		if answered && valid && si.LameDuck {
			// With other servers in its pool the client leaves the link
			// once it has read the INFO, and may still answer what was
			// already read: a PING sent now is answered only if it stayed.
			if lc.c.Send([]byte("PING\r\n")) != nil {
				answered = false
			} else if _, err := lc.c.Expect(liveCtx(t), proto.KindPong); err != nil {
				answered = false
			}
		}
		switch {
		case valid && !si.LameDuck && !answered:
			t.Fatalf("INFO %q: the client dropped the connection (%v), want it applied", text, err)
		case !valid && answered:
			t.Fatalf("INFO %q: applied, want a protocol error", text)
		}
		if !answered {
			lc.dropped(t)
		}
	})
}

// FuzzStatusReply answers a request with an HMSG whose header block and
// payload are the input, followed by a plain reply. The client delivers
// the first when its block is valid (refValidBlock): a 503 status without
// payload is ErrNoResponders, anything else the message itself, with the
// status code refStatus reads and the bytes sent; an invalid block is
// dropped and counted (Stats().BadHeaders), and the plain reply answers
// the request. Frames the parser itself refuses are FuzzParserSplits's
// domain and skipped here.
func FuzzStatusReply(f *testing.F) {
	lc := newLiveConn(f)
	f.Fuzz(func(t *testing.T, block, payload []byte) {
		frame := wire.AppendHMsg(nil, "_INBOX.a.b", 1, "", block, payload)
		var p proto.Parser
		p.Feed(frame)
		if _, err := p.Next(); err != nil || p.Offset() != int64(len(frame)) {
			return
		}
		before := lc.nc.Stats().BadHeaders
		type result struct {
			m   *conn.Msg
			err error
		}
		done := make(chan result, 1)
		go func() {
			m, err := lc.nc.Request(liveCtx(t), "svc", nil)
			done <- result{m, err}
		}()
		pub, err := lc.c.Expect(liveCtx(t), proto.KindPub)
		if err != nil {
			t.Fatalf("waiting for the request: %v", err)
		}
		reply := string(pub.Reply)
		sid, ok := liveSID(lc, reply)
		if !ok {
			t.Fatalf("no subscription for the reply subject %q", reply)
		}
		frame = wire.AppendHMsg(nil, reply, sid, "", block, payload)
		frame = wire.AppendMsg(frame, reply, sid, "", []byte("plain"))
		if err := lc.c.Send(frame); err != nil {
			t.Fatal(err)
		}
		r := <-done
		code, _ := fuzzref.Status(block)
		switch {
		case !fuzzref.ValidBlock(block):
			if r.err != nil || string(r.m.Data) != "plain" {
				t.Fatalf("invalid block %q: %v %v, want the plain reply", block, r.m, r.err)
			}
			if got := lc.nc.Stats().BadHeaders; got != before+1 {
				t.Fatalf("invalid block %q: BadHeaders %d, want %d", block, got, before+1)
			}
		case code == 503 && len(payload) == 0:
			if !errors.Is(r.err, conn.ErrNoResponders) {
				t.Fatalf("block %q: %v %v, want ErrNoResponders", block, r.m, r.err)
			}
		default:
			if r.err != nil {
				t.Fatalf("block %q, payload %q: %v", block, payload, r.err)
			}
			if r.m.Status() != code || !bytes.Equal(r.m.Header.Block(), block) || !bytes.Equal(r.m.Data, payload) {
				t.Fatalf("block %q, payload %q: delivered status %d, block %q, data %q; want status %d",
					block, payload, r.m.Status(), r.m.Header.Block(), r.m.Data, code)
			}
		}
	})
}

// liveSID finds the subscription the client made for reply subjects like
// reply (the request mux's "<prefix>.*").
func liveSID(lc *liveConn, reply string) (uint64, bool) {
	for _, op := range lc.c.Ops() {
		if op.Kind != proto.KindSub {
			continue
		}
		prefix, ok := strings.CutSuffix(string(op.Subject), "*")
		if ok && strings.HasPrefix(reply, prefix) && !strings.Contains(reply[len(prefix):], ".") {
			return op.SID, true
		}
	}
	return 0, false
}
