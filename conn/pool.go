package conn

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// server is one entry of the server pool.
type server struct {
	url        *url.URL
	tlsName    string // name to verify a TLS certificate against
	discovered bool
	failures   int       // consecutive failed attempts
	refusals   int       // consecutive attempts the server refused (refusal)
	authFailed bool      // the last attempt was refused for credentials
	readyAt    time.Time // earliest time of the next attempt
}

func (s *server) addr() string { return s.url.Host }

// redacted is the URL without credentials, for logs and events.
func (s *server) redacted() string {
	u := *s.url
	u.User = nil
	return u.String()
}

func (s *server) isWS() bool { return s.url.Scheme == "ws" || s.url.Scheme == "wss" }

func (s *server) wantsTLS() bool { return s.url.Scheme == "tls" || s.url.Scheme == "wss" }

// parseServerURLs parses a comma-separated list of server URLs. A bare
// "host:port" or "host" means nats://; the default port is 4222 (80 and 443
// for ws and wss).
func parseServerURLs(list string) ([]*server, error) {
	var out []*server
	for _, raw := range strings.Split(list, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		s, err := parseServerURL(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no server URL", ErrInvalidOption)
	}
	return out, nil
}

func parseServerURL(raw string) (*server, error) {
	if !strings.Contains(raw, "://") {
		raw = "nats://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse errors quote the input, which may hold credentials.
		return nil, fmt.Errorf("%w: malformed server URL", ErrInvalidOption)
	}
	port := "4222"
	switch u.Scheme {
	case "nats", "tls":
	case "ws":
		port = "80"
	case "wss":
		port = "443"
	default:
		return nil, fmt.Errorf("%w: unsupported URL scheme %q", ErrInvalidOption, u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("%w: server URL without host", ErrInvalidOption)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(host, port)
	}
	return &server{url: u, tlsName: host}, nil
}

// maxPoolSize bounds the server pool: servers a cluster gossips beyond it
// are ignored (the named servers always stay).
const maxPoolSize = 1024

// serverPool is the ordered set of servers to (re)connect to.
type serverPool struct {
	servers []*server
	index   map[string]*server // by poolKey(addr)
	tlsName string             // TLS name of the first named server, for gossiped IPs
	// userInfo is the first credentials found in a named URL; discovered
	// servers use them (under the rules of connectMsg).
	userInfo *url.Userinfo
}

// poolKey is the key of a "host:port" address in the pool's index: host
// names compare without case.
func poolKey(addr string) string { return strings.ToLower(addr) }

func newPool(servers []*server, randomize bool) *serverPool {
	if randomize {
		rand.Shuffle(len(servers), func(i, j int) { servers[i], servers[j] = servers[j], servers[i] })
	}
	p := &serverPool{index: make(map[string]*server, len(servers))}
	for _, s := range servers {
		if p.tlsName == "" && net.ParseIP(s.tlsName) == nil {
			p.tlsName = s.tlsName
		}
		if p.userInfo == nil && s.url.User != nil {
			p.userInfo = s.url.User
		}
		if _, dup := p.index[poolKey(s.addr())]; dup {
			continue
		}
		p.index[poolKey(s.addr())] = s
		p.servers = append(p.servers, s)
	}
	return p
}

// pick returns the server to try next: a named (configured) server whose
// wait is over before any gossiped one, so that servers learned from the
// cluster never starve the ones the user named; else the server that may
// be tried soonest. Among equals, the first in pool order.
func (p *serverPool) pick() *server {
	now := time.Now()
	var best *server
	for _, s := range p.servers {
		if best == nil || p.before(s, best, now) {
			best = s
		}
	}
	return best
}

// before reports whether a comes before b in pick's order at now.
func (p *serverPool) before(a, b *server, now time.Time) bool {
	aReady, bReady := !a.readyAt.After(now), !b.readyAt.After(now)
	if aReady && bReady && a.discovered != b.discovered {
		return !a.discovered
	}
	if aReady != bReady {
		return aReady
	}
	return a.readyAt.Before(b.readyAt)
}

// namedReadyAt is when the first named server's wait ends, if that is
// after now: an attempt to gossiped server s is cut short then, so that a
// gossiped server that accepts and never answers holds the named ones
// back for no longer than their own wait. ok is false when s is named or
// no named server waits.
func (p *serverPool) namedReadyAt(s *server, now time.Time) (t time.Time, ok bool) {
	if !s.discovered {
		return time.Time{}, false
	}
	for _, x := range p.servers {
		if !x.discovered && x.readyAt.After(now) && (!ok || x.readyAt.Before(t)) {
			t, ok = x.readyAt, true
		}
	}
	return t, ok
}

// remove drops s from the pool.
func (p *serverPool) remove(s *server) {
	for i, x := range p.servers {
		if x == s {
			p.servers = append(p.servers[:i], p.servers[i+1:]...)
			if p.index[poolKey(s.addr())] == s {
				delete(p.index, poolKey(s.addr()))
			}
			return
		}
	}
}

// moveToEnd puts s last, so that among servers ready at once the others are
// tried first.
func (p *serverPool) moveToEnd(s *server) {
	for i, x := range p.servers {
		if x == s {
			copy(p.servers[i:], p.servers[i+1:])
			p.servers[len(p.servers)-1] = s
			return
		}
	}
}

// gossip is the server list of an INFO, parsed and checked without holding
// the connection's lock (prepareGossip); merge applies it to the pool.
type gossip struct {
	listed bool                // the INFO named servers at all
	keep   map[string]struct{} // poolKey of every listed address
	fresh  []*server           // new candidates, deduplicated, at most maxPoolSize
	bad    int                 // malformed entries skipped
}

// prepareGossip parses gossiped "host:port" URLs into servers with the
// scheme of cur. A gossiped IP is verified against the TLS name of the
// first named server (poolTLSName) or cur's; a gossiped host name against
// itself, or like an IP when pin is set (PinDiscoveredServers). Its cost
// is linear in len(urls).
func prepareGossip(urls []string, cur *server, poolTLSName string, pin, randomize bool) *gossip {
	g := &gossip{listed: len(urls) > 0}
	if !g.listed {
		return g
	}
	g.keep = make(map[string]struct{}, len(urls))
	pinned := cur.tlsName
	if poolTLSName != "" {
		pinned = poolTLSName
	}
	for _, hp := range urls {
		host, port, err := net.SplitHostPort(strings.TrimSpace(hp))
		if err != nil || !validHost(host) || !validPort(port) {
			g.bad++
			continue
		}
		addr := net.JoinHostPort(host, port)
		key := poolKey(addr)
		if _, seen := g.keep[key]; seen {
			continue
		}
		g.keep[key] = struct{}{}
		if len(g.fresh) >= maxPoolSize {
			continue
		}
		name := host
		if pin || net.ParseIP(host) != nil {
			name = pinned
		}
		g.fresh = append(g.fresh, &server{url: &url.URL{Scheme: cur.url.Scheme, Host: addr}, tlsName: name, discovered: true})
	}
	if randomize {
		rand.Shuffle(len(g.fresh), func(i, j int) { g.fresh[i], g.fresh[j] = g.fresh[j], g.fresh[i] })
	}
	return g
}

// merge applies g to the pool: discovered servers g no longer lists are
// forgotten (except cur; named servers always stay), then servers new to
// the pool are added while it holds fewer than maxPoolSize. Its cost is
// linear in the pool's size and len(g.fresh), both bounded by
// maxPoolSize. It returns how many servers were added and removed.
func (p *serverPool) merge(g *gossip, cur *server) (added, gone int) {
	if !g.listed {
		return 0, 0
	}
	out := p.servers[:0]
	for _, s := range p.servers {
		if _, ok := g.keep[poolKey(s.addr())]; s.discovered && s != cur && !ok {
			delete(p.index, poolKey(s.addr()))
			gone++
			continue
		}
		out = append(out, s)
	}
	clear(p.servers[len(out):])
	p.servers = out
	for _, f := range g.fresh {
		if len(p.servers) >= maxPoolSize {
			break
		}
		key := poolKey(f.addr())
		if _, ok := p.index[key]; ok {
			continue
		}
		p.index[key] = f
		p.servers = append(p.servers, f)
		added++
	}
	return added, gone
}

func (p *serverPool) has(addr string) bool {
	_, ok := p.index[poolKey(addr)]
	return ok
}

// urls lists the pool's servers without credentials.
func (p *serverPool) urls() []string {
	out := make([]string, len(p.servers))
	for i, s := range p.servers {
		out[i] = s.redacted()
	}
	return out
}

// backoff is the delay before the attempt-th consecutive attempt to a
// server (1: the first after losing it), refusals of which were refused by
// the server (see refusal). By default a server that could not be reached
// is retried every reconnectWait, so the client is back at most that plus
// the jitter after the server is; one that refused the client waits
// reconnectWait doubled after each further refusal, up to
// maxReconnectWait. ReconnectBackoff makes every failure double the wait;
// ReconnectDelay replaces the computation.
func (o *options) backoff(attempt, refusals int) time.Duration {
	if o.reconnectDelay != nil {
		return o.reconnectDelay(attempt)
	}
	n := 1 // the wait is reconnectWait doubled n-1 times
	switch {
	case o.backoffAll:
		n = attempt
	case refusals > 0:
		n = refusals
	}
	d := o.reconnectWait
	for i := 1; i < n && d < o.maxReconnectWait; i++ {
		d *= 2
	}
	d = min(d, o.maxReconnectWait)
	if o.reconnectJitter > 0 {
		d += rand.N(o.reconnectJitter)
	}
	return d
}

// validHost accepts an IP or a host name of letters, digits, '-', '.' and
// '_' (gossip carries no other forms).
func validHost(h string) bool {
	if h == "" {
		return false
	}
	if net.ParseIP(h) != nil {
		return true
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// validPort accepts 1 to 65535 in decimal.
func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535 && p[0] != '+' && p[0] != '-'
}

// gossipFor prepares the server list of info, received from cur, for the
// pool (nil when discovery is off). It runs without nc.mu held.
func (nc *Conn) gossipFor(info *ServerInfo, cur *server) *gossip {
	if nc.opts.ignoreDiscovered {
		return nil
	}
	urls := info.ConnectURLs
	if cur.isWS() {
		urls = info.WSConnectURL
	}
	if len(urls) == 0 {
		return &gossip{}
	}
	nc.mu.Lock()
	name := nc.pool.tlsName
	nc.mu.Unlock()
	g := prepareGossip(urls, cur, name, nc.opts.pinDiscovered, !nc.opts.noRandomize)
	if gossipHook != nil {
		gossipHook(nc)
	}
	return g
}

// gossipHook, when set by a test, runs where gossipFor has parsed a server
// list, without nc.mu held.
var gossipHook func(*Conn)

// applyGossipLocked merges g into the pool and reports a change. nc.mu is
// held; the work is bounded by maxPoolSize whatever the INFO's size.
func (nc *Conn) applyGossipLocked(g *gossip) {
	if g == nil {
		return
	}
	added, gone := nc.pool.merge(g, nc.cur)
	if added > 0 || g.bad > 0 || gone > 0 {
		nc.opts.logger.Info("nats: server pool updated", "added", added, "removed", gone, "malformed", g.bad)
		nc.ev.push(Event{Kind: EventDiscovered, Server: nc.cur.redacted()})
	}
}
