package conn

import (
	"context"
	"time"
)

// Server is one server of the connection's pool, as a ReconnectToServer
// handler sees it.
type Server struct {
	// URL is the server's URL without credentials; return it to choose
	// the server.
	URL string
	// Discovered reports a server learned from the cluster's gossip.
	Discovered bool
	// Attempts counts the failed attempts to the server since it was
	// last connected (the count MaxReconnects bounds).
	Attempts int
}

// ReconnectToServerHandler chooses the server of the next reconnect
// attempt, given the pool and the INFO of the server last connected (its
// zero value before the first connection). It returns the URL of a server
// of the pool (as in Server.URL; credentials and case in the host name do
// not matter) and how long to wait before the attempt: 0 tries at once,
// so a handler that keeps choosing a server that is down must pace its
// attempts itself. It returns "" to leave the choice to the default
// policy (see ReconnectWait). A URL that is not in the pool is logged and
// the default policy chooses.
type ReconnectToServerHandler func(pool []Server, info ServerInfo) (url string, delay time.Duration)

// ReconnectToServer makes f choose the server and the wait of every
// reconnect attempt (ADR-40). f runs on the reconnecting goroutine, without
// the connection's lock; it must not block and must not call Close.
func ReconnectToServer(f ReconnectToServerHandler) Option {
	return Option{func(o *options) error {
		if f == nil {
			return invalid("nil reconnect-to-server handler")
		}
		o.reconnectTo = f
		return nil
	}}
}

// SetServerPool replaces the connection's server pool, discovered servers
// included, with urls (parsed like Connect's, shuffled unless
// DontRandomize). The current connection stays; the new pool is used from
// the next reconnect on (ForceReconnect applies it at once). Servers the
// cluster gossips are added to it again unless IgnoreDiscoveredServers. It
// fails with ErrInvalidOption for an empty or malformed list, leaving the
// pool as it was, and with ErrClosed after Close.
func (nc *Conn) SetServerPool(urls ...string) error {
	var servers []*server
	for _, u := range urls {
		s, err := parseServerURL(u)
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	if len(servers) == 0 {
		return invalid("empty server pool")
	}
	p := newPool(servers, !nc.opts.noRandomize)
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.state == stateClosed {
		return ErrClosed
	}
	nc.pool = p
	return nil
}

// snapshot lists the pool for a ReconnectToServer handler.
func (p *serverPool) snapshot() []Server {
	out := make([]Server, len(p.servers))
	for i, s := range p.servers {
		out[i] = Server{URL: s.redacted(), Discovered: s.discovered, Attempts: s.failures}
	}
	return out
}

// find returns the pool's server for url, or nil.
func (p *serverPool) find(url string) *server {
	s, err := parseServerURL(url)
	if err != nil {
		return nil
	}
	return p.index[poolKey(s.addr())]
}

// chooseLocked asks the ReconnectToServer handler for the next server and
// wait, given the default choice s and its wait. nc.mu is held on entry
// and on return, released while the handler runs; ok is false when the
// connection was closed meanwhile.
func (nc *Conn) chooseLocked(s *server, wait time.Duration) (_ *server, _ time.Duration, ok bool) {
	f := nc.opts.reconnectTo
	if f == nil {
		return s, wait, true
	}
	pool := nc.pool.snapshot()
	var info ServerInfo
	if nc.info != nil && nc.connects > 0 {
		info = *nc.info
	}
	nc.mu.Unlock()
	u, d := f(pool, info)
	nc.mu.Lock()
	if nc.state == stateClosed {
		return nil, 0, false
	}
	if u == "" {
		return s, wait, true
	}
	if c := nc.pool.find(u); c != nil {
		return c, max(d, 0), true
	}
	nc.opts.logger.Warn("nats: reconnect handler chose a server outside the pool; using the default choice")
	return s, wait, true
}

// attemptCtxLocked returns the context of the next attempt to s: the
// connection's, ending when the first named server's wait does if s was
// gossiped (serverPool.namedReadyAt). nc.mu is held.
func (nc *Conn) attemptCtxLocked(s *server) (context.Context, context.CancelFunc) {
	if t, ok := nc.pool.namedReadyAt(s, time.Now()); ok {
		return context.WithDeadline(nc.ctx, t)
	}
	return context.WithCancel(nc.ctx)
}
