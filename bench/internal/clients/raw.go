package clients

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"
)

// Raw runs the scenarios with no client library: pre-encoded frames written
// to a net.Conn in writes of 64 KiB or more, and a minimal frame reader.
// It is the ceiling for these access patterns, not a usable client: no
// reconnects, no reply matching, no error handling beyond the basics.
type Raw struct{}

// Name implements Client.
func (Raw) Name() string { return "raw" }

const (
	rawReadBuf  = 256 << 10
	rawScanBuf  = 1 << 20
	rawMinWrite = 64 << 10
	// rawPubSubWrite is the pub/sub publisher's write: larger than
	// rawMinWrite, since its subscriber keeps the server busy too and
	// every write that blocks costs a wake-up.
	rawPubSubWrite = 256 << 10
	rawIOTimeout   = 30 * time.Second
)

type rawConn struct {
	c  net.Conn
	rd *Reader
}

// connectJSON is the CONNECT the raw client sends.
const connectJSON = `{"verbose":false,"pedantic":false,"lang":"raw","version":"0.0.0","protocol":1,"echo":true,"headers":true,"no_responders":true,"name":%q}`

// dialRaw connects and completes the handshake (INFO, CONNECT, PING/PONG).
func dialRaw(ctx context.Context, rawURL, name string) (*rawConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	rc := &rawConn{c: c, rd: NewReader(c, rawReadBuf)}
	_ = c.SetReadDeadline(time.Now().Add(rawIOTimeout))
	op, err := rc.rd.Next(nil)
	if err == nil && op.Kind != OpInfo {
		err = fmt.Errorf("raw: expected INFO, got frame kind %d", op.Kind)
	}
	if err == nil {
		_, err = fmt.Fprintf(c, "CONNECT "+connectJSON+"\r\n", name)
	}
	if err == nil {
		err = rc.roundTrip()
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return rc, nil
}

// roundTrip sends PING and reads until the PONG. Only for a connection
// without a reader goroutine.
func (rc *rawConn) roundTrip() error {
	_ = rc.c.SetReadDeadline(time.Now().Add(rawIOTimeout))
	defer rc.c.SetReadDeadline(time.Time{})
	if _, err := rc.c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	for {
		op, err := rc.rd.Next(nil)
		if err != nil {
			return err
		}
		switch op.Kind {
		case OpPong:
			return nil
		case OpPing:
			if _, err := rc.c.Write([]byte("PONG\r\n")); err != nil {
				return err
			}
		case OpErr:
			return fmt.Errorf("raw: server error %s", op.Text)
		}
	}
}

func (rc *rawConn) subscribe(subject string, sid int) error {
	if _, err := rc.c.Write(AppendSub(nil, subject, sid)); err != nil {
		return err
	}
	return rc.roundTrip()
}

// writeFrames writes n frames of frameLen bytes taken from batch (which
// holds k of them).
func (rc *rawConn) writeFrames(batch []byte, frameLen, k, n int) error {
	for ; n >= k; n -= k {
		if _, err := rc.c.Write(batch); err != nil {
			return err
		}
	}
	if n > 0 {
		if _, err := rc.c.Write(batch[:n*frameLen]); err != nil {
			return err
		}
	}
	return nil
}

// --- publish ---

type rawPub struct {
	rc          *rawConn
	batch       []byte
	frameLen, k int
}

// NewPublish implements Publisher.
func (Raw) NewPublish(ctx context.Context, cfg Config) (Runner, error) {
	rc, err := dialRaw(ctx, cfg.URL, "bench-raw-pub")
	if err != nil {
		return nil, err
	}
	p := &rawPub{rc: rc}
	p.batch, p.frameLen, p.k = PubBatch(cfg.Subject, Payload(cfg.Size), rawMinWrite)
	return p, nil
}

func (p *rawPub) Run(n int) error {
	if err := p.rc.writeFrames(p.batch, p.frameLen, p.k, n); err != nil {
		return err
	}
	return p.rc.roundTrip()
}

func (p *rawPub) Close() error { return p.rc.c.Close() }

// --- pub/sub ---

type rawPubSub struct {
	pub, sub    *rawConn
	batch       []byte
	frameLen, k int
	cnt         *counter
	async       errAsync
	closing     atomic.Bool
	readerDone  chan struct{}
}

// NewPubSub implements PubSuber. The raw subscriber is the same in every
// mode: a reader goroutine that counts MSG frames.
func (Raw) NewPubSub(ctx context.Context, cfg Config) (Runner, error) {
	p := &rawPubSub{cnt: newCounter(cfg.Size), readerDone: make(chan struct{})}
	var err error
	if p.sub, err = dialRaw(ctx, cfg.URL, "bench-raw-sub"); err != nil {
		return nil, err
	}
	p.pub = p.sub
	if !cfg.SameConn {
		if p.pub, err = dialRaw(ctx, cfg.URL, "bench-raw-pub"); err != nil {
			p.sub.c.Close()
			return nil, err
		}
	}
	if err := p.sub.subscribe(cfg.Subject, 1); err != nil {
		p.pub.c.Close()
		p.sub.c.Close()
		return nil, err
	}
	p.batch, p.frameLen, p.k = PubBatch(cfg.Subject, Payload(cfg.Size), rawPubSubWrite)
	go p.read()
	return p, nil
}

func (p *rawPubSub) read() {
	defer close(p.readerDone)
	// The subscription was made through p.sub.rd; anything that reader
	// buffered after the PONG (nothing: no message is published before
	// Run) would be lost to the scanner, so check.
	if n := p.sub.rd.br.Buffered(); n > 0 {
		p.async.set(fmt.Errorf("raw: %d bytes buffered before the scanner started", n))
		return
	}
	sc := NewMsgScanner(p.sub.c, rawScanBuf, p.cnt.size)
	control := func(line []byte) error {
		switch {
		case bytes.Equal(line, []byte("PING")):
			_, err := p.sub.c.Write([]byte("PONG\r\n"))
			return err
		case bytes.Equal(line, []byte("PONG")), bytes.Equal(line, []byte("+OK")), bytes.HasPrefix(line, []byte("INFO ")):
			return nil
		case bytes.HasPrefix(line, []byte("-ERR")):
			return fmt.Errorf("raw: server error %s", bytes.TrimSpace(line[4:]))
		}
		return fmt.Errorf("%w: unexpected line %q", ErrProtocol, line)
	}
	for {
		res, err := sc.Scan(control)
		if res.Msgs > 0 {
			p.cnt.addN(res.Msgs, res.BadSize)
		}
		if err != nil {
			if !p.closing.Load() {
				p.async.set(err)
			}
			return
		}
	}
}

func (p *rawPubSub) Run(n int) error {
	target := p.cnt.expect(n)
	if err := p.pub.writeFrames(p.batch, p.frameLen, p.k, n); err != nil {
		return err
	}
	dropped := func() int64 {
		if p.async.get() != nil {
			return -1
		}
		return 0
	}
	if err := p.cnt.wait(target, dropped); err != nil {
		return errors.Join(err, p.async.get())
	}
	if err := p.async.get(); err != nil {
		return err
	}
	return p.cnt.checkExact(target)
}

func (p *rawPubSub) Close() error {
	p.closing.Store(true)
	if p.pub != p.sub {
		p.pub.c.Close()
	}
	p.sub.c.Close()
	<-p.readerDone
	return nil
}

// --- request/reply ---

type rawReq struct {
	req, resp *rawConn
	subject   string
	inbox     string // the reply prefix: request i replies to inbox.<i>
	payload   []byte
	frame     []byte // the request being sent, rebuilt for each reply subject
	replyBuf  []byte
	size      int
	sent      int
	closing   atomic.Bool
	respDone  chan struct{}
	async     errAsync
}

// NewRequest implements Requester. The requester subscribes to inbox.*
// and gives each request a reply subject of its own (inbox.<n>), as a core
// request must: any number of responders may answer a request, so a reply
// subject used again could take a late answer to an earlier request for
// the answer to the next one. (natsio and nats.go do the same; a server
// routes a new subject at some cost, which a single fixed inbox would
// avoid.) It writes and reads inline, on the calling goroutine. The
// responder reads requests on its own goroutine and writes each reply as
// soon as it has parsed the request.
func (Raw) NewRequest(ctx context.Context, cfg Config) (LatencyRunner, error) {
	r := &rawReq{size: cfg.Size, subject: cfg.Subject, payload: Payload(cfg.Size), respDone: make(chan struct{})}
	var err error
	if r.resp, err = dialRaw(ctx, cfg.URL, "bench-raw-responder"); err != nil {
		return nil, err
	}
	if err = r.resp.subscribe(cfg.Subject, 1); err == nil {
		r.req, err = dialRaw(ctx, cfg.URL, "bench-raw-requester")
	}
	inbox := "_INBOX.raw." + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err == nil {
		err = r.req.subscribe(inbox+".*", 1)
	}
	if err != nil {
		r.resp.c.Close()
		if r.req != nil {
			r.req.c.Close()
		}
		return nil, err
	}
	r.inbox = inbox + "."
	go r.respond(Payload(cfg.Size))
	return r, nil
}

func (r *rawReq) respond(payload []byte) {
	defer close(r.respDone)
	var reply, out []byte
	for {
		op, err := r.resp.rd.Next(reply)
		if err != nil {
			if !r.closing.Load() {
				r.async.set(err)
			}
			return
		}
		switch op.Kind {
		case OpMsg:
			reply = op.Reply
			out = AppendPub(out[:0], op.Reply, "", payload)
		case OpPing:
			out = append(out[:0], "PONG\r\n"...)
		default:
			continue
		}
		if _, err := r.resp.c.Write(out); err != nil {
			if !r.closing.Load() {
				r.async.set(err)
			}
			return
		}
	}
}

func (r *rawReq) Run(lat []time.Duration) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	_ = r.req.c.SetReadDeadline(time.Now().Add(rawIOTimeout))
	defer r.req.c.SetReadDeadline(time.Time{})
	for i := range lat {
		t0 := time.Now()
		r.sent++
		r.frame = r.appendRequest(r.frame[:0], r.sent)
		if _, err := r.req.c.Write(r.frame); err != nil {
			return err
		}
	read:
		for {
			op, err := r.req.rd.Next(r.replyBuf)
			if err != nil {
				return errors.Join(fmt.Errorf("request %d: %w", i, err), r.async.get())
			}
			switch op.Kind {
			case OpMsg:
				if op.Size != r.size {
					return fmt.Errorf("reply of %d bytes, want %d", op.Size, r.size)
				}
				break read
			case OpHMsg:
				return fmt.Errorf("request %d: status reply (no responders?)", i)
			case OpPing:
				if _, err := r.req.c.Write([]byte("PONG\r\n")); err != nil {
					return err
				}
			case OpErr:
				return fmt.Errorf("raw: server error %s", op.Text)
			}
		}
		lat[i] = time.Since(t0)
	}
	return r.async.get()
}

// appendRequest appends request n: its PUB with reply subject inbox.<n>.
func (r *rawReq) appendRequest(dst []byte, n int) []byte {
	dst = append(dst, "PUB "...)
	dst = append(dst, r.subject...)
	dst = append(dst, ' ')
	dst = append(dst, r.inbox...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(len(r.payload)), 10)
	dst = append(dst, "\r\n"...)
	dst = append(dst, r.payload...)
	return append(dst, "\r\n"...)
}

func (r *rawReq) Close() error {
	r.closing.Store(true)
	r.req.c.Close()
	r.resp.c.Close()
	<-r.respDone
	return nil
}
