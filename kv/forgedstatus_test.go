package kv_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/kv"
)

// forgedStatuses are status lines another tenant can publish to a pull
// inbox it learned from $JS.API.CONSUMER.MSG.NEXT.>: none of them may end
// a watch by itself.
var forgedStatuses = []string{
	"400 Bad Request",
	"409 Consumer is push based",
	"409 Exceeded MaxRequestBatch of 500",
	"409 Exceeded MaxRequestExpires of 1s",
	"409 Message Size Exceeds MaxBytes",
	"412 Precondition Failed",
	"418 I'm a teapot",
}

// Another tenant on the same server learns the pull inbox of a running
// WatchAll from the pull requests and publishes one forged status to it,
// after the watch has yielded its initial values. The watch goes on: the
// next write to the bucket is yielded, no error ends the loop.
func TestForgedStatusDoesNotEndWatch(t *testing.T) {
	for _, status := range forgedStatuses {
		t.Run(status, func(t *testing.T) {
			e := newEnv(t)
			b := e.bucket(t, kv.Config{Bucket: "forged"})
			mustPut(t, b, "k", "0")
			spy := testutil.NewPullSpy(t, e.Server.URL())
			w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] {
				return b.WatchAll(ctx)
			})
			if got := w.Entry(); string(got.Value) != "0" {
				t.Fatalf("initial value %+v", got)
			}
			w.Marker()
			reply := spy.NextPull(t)
			forgeStatus(t, e.Server.URL(), reply, status)
			mustPut(t, b, "k", "1")
			ent, err, ok := w.Next()
			if !ok || err != nil || ent == nil || string(ent.Value) != "1" {
				t.Fatalf("after a forged %q: got %+v, %v (open %v); want k=1", status, ent, err, ok)
			}
		})
	}
}

// forgeStatus publishes a status message (a header block with only a
// status line, which no client's header type writes) to subject over a
// TCP connection of its own, and waits for the server's PONG, so it has
// been routed when it returns.
func forgeStatus(t *testing.T, url, subject, status string) {
	t.Helper()
	c, r := testutil.RawConn(t, url, 30*time.Second)
	defer c.Close()
	hdr := "NATS/1.0 " + status + "\r\n\r\n"
	var sb strings.Builder
	fmt.Fprintf(&sb, "HPUB %s %d %d\r\n%s\r\n", subject, len(hdr), len(hdr), hdr)
	if _, err := c.Write([]byte(sb.String())); err != nil {
		t.Fatal(err)
	}
	testutil.AwaitPong(t, c, r)
}
