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

// serverPool is the ordered set of servers to (re)connect to.
type serverPool struct {
	servers []*server
	tlsName string // TLS name of the first named server, for gossiped IPs
	// userInfo is the first credentials found in a named URL; discovered
	// servers use them (under the rules of connectMsg).
	userInfo *url.Userinfo
}

func newPool(servers []*server, randomize bool) *serverPool {
	if randomize {
		rand.Shuffle(len(servers), func(i, j int) { servers[i], servers[j] = servers[j], servers[i] })
	}
	p := &serverPool{servers: servers}
	for _, s := range servers {
		if p.tlsName == "" && net.ParseIP(s.tlsName) == nil {
			p.tlsName = s.tlsName
		}
		if p.userInfo == nil && s.url.User != nil {
			p.userInfo = s.url.User
		}
	}
	return p
}

// pick returns the server that may be tried soonest, first in pool order
// among equals.
func (p *serverPool) pick() *server {
	var best *server
	for _, s := range p.servers {
		if best == nil || s.readyAt.Before(best.readyAt) {
			best = s
		}
	}
	return best
}

// remove drops s from the pool.
func (p *serverPool) remove(s *server) {
	for i, x := range p.servers {
		if x == s {
			p.servers = append(p.servers[:i], p.servers[i+1:]...)
			return
		}
	}
}

// moveToEnd puts s last, so that among servers ready at once the others are
// tried first.
func (p *serverPool) moveToEnd(s *server) {
	p.remove(s)
	p.servers = append(p.servers, s)
}

// discover adds gossiped "host:port" URLs with the scheme of cur. It returns
// how many were added and how many malformed ones were skipped.
func (p *serverPool) discover(urls []string, cur *server, randomize bool) (added, bad int) {
	var fresh []*server
	seen := func(addr string) bool {
		for _, f := range fresh {
			if strings.EqualFold(f.addr(), addr) {
				return true
			}
		}
		return p.has(addr)
	}
	for _, hp := range urls {
		host, port, err := net.SplitHostPort(strings.TrimSpace(hp))
		if err != nil || !validHost(host) || !validPort(port) {
			bad++
			continue
		}
		addr := net.JoinHostPort(host, port)
		if seen(addr) {
			continue
		}
		u := &url.URL{Scheme: cur.url.Scheme, Host: addr}
		name := host
		if net.ParseIP(host) != nil {
			name = cur.tlsName
			if p.tlsName != "" {
				name = p.tlsName
			}
		}
		fresh = append(fresh, &server{url: u, tlsName: name, discovered: true})
	}
	if randomize {
		rand.Shuffle(len(fresh), func(i, j int) { fresh[i], fresh[j] = fresh[j], fresh[i] })
	}
	p.servers = append(p.servers, fresh...)
	return len(fresh), bad
}

func (p *serverPool) has(addr string) bool {
	for _, s := range p.servers {
		if strings.EqualFold(s.addr(), addr) {
			return true
		}
	}
	return false
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

// forget removes discovered servers that a full gossip list (urls) no longer
// names, except cur. Named servers always stay. It returns how many went.
func (p *serverPool) forget(urls []string, cur *server) int {
	if len(urls) == 0 {
		return 0
	}
	keep := make(map[string]bool, len(urls))
	for _, hp := range urls {
		if host, port, err := net.SplitHostPort(strings.TrimSpace(hp)); err == nil {
			keep[strings.ToLower(net.JoinHostPort(host, port))] = true
		}
	}
	n := 0
	out := p.servers[:0]
	for _, s := range p.servers {
		if s.discovered && s != cur && !keep[strings.ToLower(s.addr())] {
			n++
			continue
		}
		out = append(out, s)
	}
	clear(p.servers[len(out):])
	p.servers = out
	return n
}
