package faultproxy

import (
	"errors"
	"io"
	"net"
	"time"
)

// bufSize is the read buffer of each pump.
const bufSize = 32 * 1024

// serve dials the target for l and then runs the Up pump itself, with the
// Down pump in a second goroutine.
func (p *Proxy) serve(l *link) {
	defer p.wg.Done()
	d := net.Dialer{Timeout: dialTimeout}
	srv, err := d.DialContext(l.ctx, "tcp", l.target)
	if err != nil {
		l.close(false)
		return
	}
	if !l.setServer(srv) {
		return
	}
	l.pending.Store(2)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.pump(l, Down, srv, l.client)
	}()
	p.pump(l, Up, l.client, srv)
}

type closeWriter interface{ CloseWrite() error }

// pump copies src to dst in direction dir, applying the faults. An EOF from
// src is propagated as a half-close of dst; any other error closes the link.
func (p *Proxy) pump(l *link, dir Direction, src, dst net.Conn) {
	defer l.pumpDone()
	buf := make([]byte, bufSize)
	var tb bucket
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.forward(l, dir, dst, buf[:n], &tb) {
			l.close(false)
			return
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if cw, ok := dst.(closeWriter); ok && cw.CloseWrite() == nil {
					return
				}
			}
			l.close(false)
			return
		}
	}
}

// forward writes data to dst under the current faults of dir, re-reading
// them before every chunk. It returns false if the link closed or a write
// failed.
func (p *Proxy) forward(l *link, dir Direction, dst net.Conn, data []byte, tb *bucket) bool {
	fs := &p.faults[dir]
	for len(data) > 0 {
		cfg, changed := fs.load()
		if cfg.stalled {
			select {
			case <-changed:
				continue
			case <-l.done:
				return false
			}
		}
		n := len(data)
		if cfg.chunk > 0 {
			n = min(n, cfg.chunk)
		}
		if cfg.rate > 0 {
			n = min(n, burstFor(cfg.rate))
			if wait := tb.take(n, cfg.rate, time.Now()); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-changed:
					t.Stop()
				case <-l.done:
					t.Stop()
					return false
				}
				continue
			}
		}
		out := data[:n:n]
		if cfg.corrupt != nil {
			out = cfg.corrupt(out)
		}
		if len(out) > 0 {
			// Count before writing so that the counters already include
			// the data by the time the peer can observe it.
			p.bytes[dir].Add(int64(len(out)))
			p.writes[dir].Add(1)
			w, err := dst.Write(out)
			if err != nil {
				p.bytes[dir].Add(int64(w - len(out)))
				return false
			}
		}
		data = data[n:]
	}
	return true
}
