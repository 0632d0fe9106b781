package testutil

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
)

// Proxy starts a fault proxy (internal/faultproxy) in front of the server
// at url (nats://host:port or host:port), closed when the test ends.
// Clients connect to its URL.
func Proxy(t testing.TB, url string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(HostPort(url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// HostPort strips the scheme from a URL.
func HostPort(url string) string {
	if _, hp, ok := strings.Cut(url, "://"); ok {
		return hp
	}
	return url
}

// FastReconnect keeps reconnect tests quick: attempts 10 ms apart,
// doubling to 50 ms, plus up to 5 ms of jitter.
func FastReconnect() conn.Option {
	return conn.ReconnectDelay(func(attempt int) time.Duration {
		d := 10 * time.Millisecond << min(attempt-1, 3)
		return min(d, 50*time.Millisecond) + rand.N(5*time.Millisecond)
	})
}
