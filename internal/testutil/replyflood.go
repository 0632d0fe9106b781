package testutil

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
)

// FloodReplies makes nc (another connection: a tenant) answer every
// request on subject with body, sent again and again by four goroutines
// per request until stop is called; stop waits for them, and runs at
// cleanup too.
func FloodReplies(t testing.TB, nc *conn.Conn, subject string, body []byte) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var (
		mu      sync.Mutex
		stopped bool
		wg      sync.WaitGroup
	)
	if _, err := nc.SubscribeFunc(subject, func(m *conn.Msg) {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					_ = nc.Publish(m.Reply, body)
				}
			})
		}
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			mu.Lock()
			stopped = true
			mu.Unlock()
			close(done)
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return stop
}
