package micro

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
)

// TestWaitHandlersBound: Stop's wait for handler goroutines, given a ctx
// without deadline, ends after the connection's drain timeout with an error
// matching conn.ErrTimeout while a handler is still running, instead of
// waiting for it for ever. (Reaching that wait through Stop takes a handler
// goroutine between taking its last request and starting the call, which a
// test cannot arrange; the wait is called directly with one handler blocked
// in its call.)
func TestWaitHandlersBound(t *testing.T) {
	srv := natstest.NewServer(t, natstest.JetStream(false))
	nc := testutil.Connect(t, srv.URL(), conn.DrainTimeout(100*time.Millisecond))
	if got := nc.DrainTimeout(); got != 100*time.Millisecond {
		t.Fatalf("DrainTimeout() = %v, want the option's 100ms", got)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	svc, err := AddService(nc, Config{Name: "bound", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		svc.Stop(ctx)
	})
	if err := svc.AddEndpoint("slow", HandlerFunc(func(r Request) {
		close(entered)
		<-release
		r.Respond(nil)
	})); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(testutil.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishMsg("slow", "nowhere", nil, nil); err != nil {
		t.Fatal(err)
	}
	<-entered

	res := make(chan error, 1)
	go func() { res <- svc.waitHandlers(context.Background()) }()
	select {
	case err := <-res:
		if !errors.Is(err, conn.ErrTimeout) {
			t.Fatalf("waitHandlers with a handler blocked: %v, want conn.ErrTimeout", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("waitHandlers did not end at the drain timeout")
	}

	// Once the handler has returned and the service has stopped, the wait
	// succeeds.
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := svc.Stop(ctx); err != nil {
		t.Fatalf("Stop after the handler returned: %v", err)
	}
	<-svc.Done()
	if err := svc.waitHandlers(ctx); err != nil {
		t.Fatalf("waitHandlers after the handlers returned: %v", err)
	}
}
