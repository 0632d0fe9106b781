package conn_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
)

// One timer serves the request timeout of every request whose ctx has no
// deadline: two unanswered requests made a second apart each fail at
// exactly their own deadline (the timer fires for the first and is armed
// again for the second), while requests answered meanwhile, before and
// after the timer fired, get their responses.
func TestRequestTimeoutSweepStaggered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		push := make(chan struct{})
		defer close(push)
		srv := startFake(t, inMemory(), withSession(echoFeed(0, push, "")))
		defer srv.stop()
		const d = 3 * time.Second
		nc := srv.connect(t, conn.RequestTimeout(d), conn.PingInterval(time.Hour))
		defer nc.Close()

		bg := context.Background()
		start := time.Now()
		var wg sync.WaitGroup
		unanswered := func(after time.Duration) {
			wg.Go(func() {
				time.Sleep(after)
				_, err := nc.Request(bg, "silent", nil)
				if el := time.Since(start); el != after+d {
					t.Errorf("request made at %v failed at %v, want %v (err %v)", after, el, after+d, err)
				}
				if !errors.Is(err, conn.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("request made at %v: %v, want ErrTimeout and context.DeadlineExceeded", after, err)
				}
			})
		}
		unanswered(0)
		unanswered(time.Second)
		for _, at := range []time.Duration{2 * time.Second, 3500 * time.Millisecond, 5 * time.Second} {
			time.Sleep(at - time.Since(start))
			m, err := nc.Request(bg, "svc", []byte("x"))
			if err != nil || string(m.Data) != "x" {
				t.Fatalf("answered request at %v: %v, %v", at, m, err)
			}
		}
		wg.Wait()
		st := nc.Stats()
		if st.RequestsPending != 0 || st.RequestTimeouts != 2 || st.Requests != 5 {
			t.Fatalf("pending %d, timeouts %d, requests %d; want 0, 2, 5", st.RequestsPending, st.RequestTimeouts, st.Requests)
		}
	})
}
