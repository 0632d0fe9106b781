package conn

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/natsio/natsio/proto"
)

// ErrForcedReconnect is the reason of a disconnect asked for by
// ForceReconnect or by a server's lame duck mode.
var ErrForcedReconnect = errors.New("nats: reconnect forced")

// install makes l the current connection. nc.mu is held. Subscriptions are
// sent again ahead of any buffered publish.
// g is info's server list (gossipFor).
func (nc *Conn) install(l *link, info *ServerInfo, s *server, g *gossip) {
	nc.link = l
	l.rd.stats = &nc.stats // the reader goroutine starts below
	nc.info = info
	nc.jsLevel.Store(jetStreamLevel(info))
	nc.cur = s
	nc.gen++
	s.failures = 0
	s.refusals = 0
	s.authFailed = false
	nc.state = stateConnected
	nc.connects++
	if nc.upCh != nil {
		close(nc.upCh) // WaitConnected
		nc.upCh = nil
	}
	nc.lastErr = nil
	nc.applyGossipLocked(g)

	var out []byte
	for _, sub := range nc.sortedSubs() {
		out, _ = proto.AppendSub(out, sub.Subject, sub.Queue, sub.sid)
		if limit := sub.max.Load(); limit > 0 {
			sub.mu.Lock()
			left := limit - min(sub.received, limit)
			sub.mu.Unlock()
			out = proto.AppendUnsub(out, sub.sid, max(left, 1))
		}
	}
	nc.wbuf = append(out, nc.wbuf...)
	nc.wg.Add(1)
	go nc.readLoop(l, nc.gen)
	nc.kicked = false
	nc.kickLocked()
}

func (nc *Conn) sortedSubs() []*Subscription {
	nc.subMu.RLock()
	subs := make([]*Subscription, 0, len(nc.subs))
	for _, s := range nc.subs {
		subs = append(subs, s)
	}
	nc.subMu.RUnlock()
	slices.SortFunc(subs, func(a, b *Subscription) int { return cmp.Compare(a.sid, b.sid) })
	return subs
}

// connLost handles the loss of connection generation gen: it releases
// pending flushes and requests with ErrDisconnected and starts reconnecting
// (or closes). Calls for an older generation are ignored.
func (nc *Conn) connLost(gen uint64, reason error) {
	nc.mu.Lock()
	if nc.gen != gen || nc.state != stateConnected {
		nc.mu.Unlock()
		return
	}
	l := nc.link
	nc.link = nil
	pongs := nc.pongs
	nc.pongs = nil
	nc.pingsOut = 0
	lost := nc.cur
	nc.lastErr = reason
	nc.disconnects++
	reconnect := !nc.opts.noReconnect && nc.opts.maxReconnects != 0 && !nc.draining
	// The link is gone: leave stateConnected even when closeWith (started
	// below) is to follow, so that a second connLost for this generation
	// (the reader seeing the socket closed here) returns above, and the
	// flusher, pinger and inline writers never use the nil link.
	nc.state = stateReconnecting
	if reconnect {
		// Retry the lost server only after a delay; others at once.
		lost.readyAt = time.Now().Add(nc.opts.backoff(1, 0))
		nc.pool.moveToEnd(lost)
		// Counted now so that Close waits for it; started below, after the
		// disconnect is reported, so that its events follow this one.
		nc.wg.Add(1)
	}
	nc.wcond.Broadcast()
	nc.mu.Unlock()

	l.shut()
	for _, ch := range pongs {
		if ch != nil {
			ch <- ErrDisconnected
		}
	}
	nc.resp.failAll(disconnectedMsg)
	nc.runDisconnectHooks(reason)
	nc.opts.logger.Warn("nats: disconnected", "server", lost.redacted(), "err", reason)
	nc.ev.push(Event{Kind: EventDisconnected, Server: lost.redacted(), Err: reason})
	if reconnect {
		go nc.reconnectLoop()
	} else {
		go nc.closeWith(reason)
	}
}

// reconnectLoop dials servers from the pool, each no sooner than its
// backoff allows, until one accepts or the connection is closed.
func (nc *Conn) reconnectLoop() {
	defer nc.wg.Done()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		nc.mu.Lock()
		if nc.state == stateClosed {
			nc.mu.Unlock()
			return
		}
		s := nc.pool.pick()
		if s == nil {
			reason := ErrNoServers
			if nc.lastErr != nil {
				reason = fmt.Errorf("%w: %w", ErrNoServers, nc.lastErr)
			}
			nc.mu.Unlock()
			go nc.closeWith(reason)
			return
		}
		wait := time.Until(s.readyAt)
		s, wait, ok := nc.chooseLocked(s, wait)
		if !ok {
			nc.mu.Unlock()
			return
		}
		actx, cancel := nc.attemptCtxLocked(s)
		nc.mu.Unlock()
		if wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case <-timer.C:
			case <-nc.closed:
				cancel()
				return
			}
		}
		l, info, err := nc.handshake(actx, s)
		cancel()
		var g *gossip
		if err == nil {
			g = nc.gossipFor(info, s)
		}
		nc.mu.Lock()
		if nc.state == stateClosed {
			nc.mu.Unlock()
			if l != nil {
				_ = l.c.Close()
			}
			return
		}
		if err != nil {
			nc.attemptFailedLocked(s, err)
			never := nc.connects == 0
			nc.mu.Unlock()
			nc.reportAttemptFailed(s, err, never)
			continue
		}
		first := nc.connects == 0
		if !first {
			nc.reconn++
		}
		nc.install(l, info, s, g)
		nc.mu.Unlock()
		if first {
			// The first connection of RetryOnFailedConnect.
			nc.opts.logger.Info("nats: connected", "server", s.redacted())
			nc.ev.push(Event{Kind: EventConnected, Server: s.redacted()})
		} else {
			nc.opts.logger.Info("nats: reconnected", "server", s.redacted())
			nc.ev.push(Event{Kind: EventReconnected, Server: s.redacted()})
		}
		nc.runReconnectHooks()
		return
	}
}

// ForceReconnect drops the current connection and reconnects, as after a
// network failure. It does nothing while disconnected or closed.
func (nc *Conn) ForceReconnect() {
	nc.mu.Lock()
	gen, ok := nc.gen, nc.state == stateConnected
	nc.mu.Unlock()
	if ok {
		nc.connLost(gen, ErrForcedReconnect)
	}
}

// leaveLameDuck moves to another server when the pool has one; with a
// single server it stays until the server closes the connection.
func (nc *Conn) leaveLameDuck(gen uint64) {
	nc.mu.Lock()
	others := len(nc.pool.servers) > 1
	nc.mu.Unlock()
	if others {
		nc.connLost(gen, ErrForcedReconnect)
	}
}

// OnDisconnect registers f to run each time the connection is lost (before
// reconnecting) and when it is closed (reason ErrClosed), with the reason; upper layers use it to fail what cannot
// complete (publish futures waiting for acks). f runs on the goroutine that
// noticed the loss and should not block. The returned function unregisters
// f.
func (nc *Conn) OnDisconnect(f func(reason error)) (remove func()) {
	nc.hookMu.Lock()
	defer nc.hookMu.Unlock()
	nc.hookSeq++
	id := nc.hookSeq
	if nc.dhooks == nil {
		nc.dhooks = make(map[uint64]func(error))
	}
	nc.dhooks[id] = f
	return func() {
		nc.hookMu.Lock()
		delete(nc.dhooks, id)
		nc.hookMu.Unlock()
	}
}

func (nc *Conn) runDisconnectHooks(reason error) {
	nc.hookMu.Lock()
	fs := make([]func(error), 0, len(nc.dhooks))
	for _, f := range nc.dhooks {
		fs = append(fs, f)
	}
	nc.hookMu.Unlock()
	for _, f := range fs {
		f(reason)
	}
}

// OnReconnect registers f to run after each successful reconnect (and
// after the first connection made in the background, RetryOnFailedConnect),
// once the subscriptions have been restored; upper layers (JetStream
// consumers) use it to re-pull. f runs on the reconnecting goroutine and should not block.
// The returned function unregisters f.
func (nc *Conn) OnReconnect(f func()) (remove func()) {
	nc.hookMu.Lock()
	defer nc.hookMu.Unlock()
	nc.hookSeq++
	id := nc.hookSeq
	if nc.hooks == nil {
		nc.hooks = make(map[uint64]func())
	}
	nc.hooks[id] = f
	return func() {
		nc.hookMu.Lock()
		delete(nc.hooks, id)
		nc.hookMu.Unlock()
	}
}

func (nc *Conn) runReconnectHooks() {
	nc.hookMu.Lock()
	fs := make([]func(), 0, len(nc.hooks))
	for _, f := range nc.hooks {
		fs = append(fs, f)
	}
	nc.hookMu.Unlock()
	for _, f := range fs {
		f()
	}
}

// refusal reports whether err is the server turning the client away, as
// opposed to the server being unreachable: an -ERR (credentials, connection
// limits), a TLS certificate or alert failure, TLS required on one side
// only, a protocol violation, or credentials the client cannot produce.
// Retrying at once will not change these, so they back off; a server that
// is down is retried at a steady pace so that the client is back soon
// after the server is.
func refusal(err error) bool {
	var (
		se *ServerError
		pe *ProtocolError
		ve *tls.CertificateVerificationError
		ae tls.AlertError
		he x509.HostnameError
		ue x509.UnknownAuthorityError
		ie x509.CertificateInvalidError
		re tls.RecordHeaderError
	)
	return errors.As(err, &se) || errors.As(err, &pe) || errors.As(err, &ve) ||
		errors.As(err, &ae) || errors.As(err, &he) || errors.As(err, &ue) ||
		errors.As(err, &ie) || errors.As(err, &re) ||
		errors.Is(err, ErrTLSRequired) || errors.Is(err, ErrBadCredentials)
}

// isAuthErr reports whether err is the server refusing the credentials.
func isAuthErr(err error) bool {
	return errors.Is(err, ErrAuthorization) || errors.Is(err, ErrAuthExpired) ||
		errors.Is(err, ErrAuthRevoked) || errors.Is(err, ErrAccountExpired)
}
