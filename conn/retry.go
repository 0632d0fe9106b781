package conn

import (
	"context"
	"errors"
	"time"
)

// assumedMaxPayload bounds publishes buffered before the first connection
// (RetryOnFailedConnect): nats-server's default max_payload.
const assumedMaxPayload = 1 << 20

// attemptFailedLocked records a failed attempt to s and schedules its next
// one: a server that cannot be reached is retried after the reconnect wait,
// one that refused the client backs off (refusal, options.backoff). The
// same authentication error twice in a row, or MaxReconnects failures,
// drop s from the pool. nc.mu is held.
func (nc *Conn) attemptFailedLocked(s *server, err error) {
	s.failures++
	if refusal(err) {
		s.refusals++
	} else {
		s.refusals = 0
	}
	// The next attempt is attempt failures+1 (attempt 1 followed the loss).
	s.readyAt = time.Now().Add(nc.opts.backoff(s.failures+1, s.refusals))
	authErr := isAuthErr(err)
	repeated := authErr && s.authFailed
	s.authFailed = authErr
	if repeated || (nc.opts.maxReconnects >= 0 && s.failures >= nc.opts.maxReconnects) {
		nc.pool.remove(s)
	}
	nc.lastErr = err
}

// reportAttemptFailed logs and reports a failed attempt to s;
// never: no connection was made yet.
func (nc *Conn) reportAttemptFailed(s *server, err error, never bool) {
	msg := "nats: reconnect attempt failed"
	if never {
		msg = "nats: connect attempt failed"
	}
	nc.opts.logger.Info(msg, "server", s.redacted(), "err", err)
	var se *ServerError
	if errors.As(err, &se) {
		// A refusal (credentials, limits) is news; a dial failure is not.
		nc.ev.push(Event{Kind: EventServerError, Server: s.redacted(), Err: se})
	}
	nc.ev.push(Event{Kind: EventAttemptFailed, Server: s.redacted(), Err: err})
}

// firstAttemptFailed records a failed attempt of Connect's first pass when
// the connection is to keep trying (RetryOnFailedConnect). No goroutine of
// the connection runs yet; the events wait in the queue for startRetrying.
func (nc *Conn) firstAttemptFailed(s *server, err error) {
	nc.mu.Lock()
	nc.attemptFailedLocked(s, err)
	nc.mu.Unlock()
	nc.reportAttemptFailed(s, err, true)
}

// startRetrying starts the connection's goroutines without a server: the
// reconnect loop goes on with the attempts Connect's first pass scheduled
// (RetryOnFailedConnect).
func (nc *Conn) startRetrying() {
	nc.startEvents()
	nc.mu.Lock()
	nc.info = &ServerInfo{MaxPayload: assumedMaxPayload, Headers: true}
	nc.state = stateReconnecting
	nc.wg.Add(3)
	nc.flusherDone = make(chan struct{})
	go nc.flusher()
	go nc.pinger()
	go nc.reconnectLoop()
	nc.mu.Unlock()
}

// WaitConnected waits until the connection is up: at once when it is, else
// until the first connection of a connection made with
// RetryOnFailedConnect, or the next reconnection. It fails with ctx's error
// (matching ErrTimeout when its deadline passed), or ErrClosed, joined with
// the reason the connection closed if it closed on its own (ErrNoServers
// when MaxReconnects ran out). Without a deadline on ctx it waits until
// the connection is up or closed.
func (nc *Conn) WaitConnected(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	for {
		nc.mu.Lock()
		switch nc.state {
		case stateConnected:
			nc.mu.Unlock()
			return nil
		case stateClosed:
			err := nc.closeErr
			nc.mu.Unlock()
			if err != nil {
				return errors.Join(ErrClosed, err)
			}
			return ErrClosed
		}
		if nc.upCh == nil {
			nc.upCh = make(chan struct{})
		}
		up := nc.upCh
		nc.mu.Unlock()
		select {
		case <-up:
		case <-nc.closed:
			<-nc.closeDone // closeErr is set
		case <-ctx.Done():
			return timeoutErr(ctx)
		}
	}
}
