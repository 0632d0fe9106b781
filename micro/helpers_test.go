package micro_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/micro"
	"github.com/natsio/natsio/natstest"
)

// Shared test helpers (internal/testutil).
var (
	connect    = testutil.Connect
	ctxT       = testutil.Ctx
	eventually = testutil.Eventually
)

func TestMain(m *testing.M) {
	natstest.RunIfChild()
	os.Exit(m.Run())
}

// startServer starts an embedded core server on a random port.
func startServer(t testing.TB) *natstest.Server {
	t.Helper()
	return natstest.NewServer(t, natstest.JetStream(false))
}

// addService adds a service and stops it when the test ends.
func addService(t testing.TB, nc *conn.Conn, cfg micro.Config) *micro.Service {
	t.Helper()
	svc, err := micro.AddService(nc, cfg)
	if err != nil {
		t.Fatalf("AddService(%s): %v", cfg.Name, err)
	}
	// The service's subscriptions reach the server before a client on
	// another connection looks for it.
	fctx, fcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer fcancel()
	if err := nc.Flush(fctx); err != nil {
		t.Fatalf("AddService(%s): flush: %v", cfg.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		svc.Stop(ctx)
	})
	return svc
}

// echo answers with prefix followed by the request's payload.
func echo(prefix string) micro.Handler {
	return micro.HandlerFunc(func(r micro.Request) {
		r.Respond(append([]byte(prefix), r.Data()...))
	})
}

// request sends data to subject and returns the reply's payload.
func request(t testing.TB, nc *conn.Conn, subject, data string) string {
	t.Helper()
	m, err := nc.Request(ctxT(t), subject, []byte(data))
	if err != nil {
		t.Fatalf("request %s: %v", subject, err)
	}
	return string(m.Data)
}

// gatherRaw sends an empty request to subject and decodes every reply
// into a generic JSON object, waiting for want replies (then a short
// stall for surplus ones).
func gatherRaw(t testing.TB, nc *conn.Conn, subject string, want int) []map[string]any {
	t.Helper()
	var out []map[string]any
	for m, err := range nc.RequestMany(ctxT(t), subject, nil, nil, conn.ManyStall(100*time.Millisecond), conn.ManyMax(want+1)) {
		if err != nil {
			t.Fatalf("%s: %v (after %d replies)", subject, err, len(out))
		}
		var v map[string]any
		if err := json.Unmarshal(m.Data, &v); err != nil {
			t.Fatalf("%s: reply %q: %v", subject, m.Data, err)
		}
		out = append(out, v)
	}
	if len(out) != want {
		t.Fatalf("%s: %d replies, want %d", subject, len(out), want)
	}
	return out
}
