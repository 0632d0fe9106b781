package surface

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pull"
)

// deadlineEnv is a JetStream server reached through a fault proxy, with a
// stream, a KV bucket, a pull consumer and one message fetched and not yet
// acknowledged. Stalling the proxy then leaves every call waiting for an
// answer that never comes, so that only its context or its default
// timeout can end it.
type deadlineEnv struct {
	proxy *faultproxy.Proxy
	nc    *conn.Conn
	js    *jsapi.JS
	// jsOwn has a Timeout of its own, shorter than the connection's.
	jsOwn *jsapi.JS
	kv    *kv.Bucket
	cons  *pull.Consumer
	msg   *jsapi.Msg
}

// defaultWait is the default timeout given to the connection and to
// JetStream, short so that the default-timeout rows end quickly.
const defaultWait = 300 * time.Millisecond

func newDeadlineEnv(t *testing.T) *deadlineEnv {
	t.Helper()
	s := natstest.NewServer(t)
	p, err := faultproxy.New(s.URL()[len("nats://"):])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, p.URL(), conn.RequestTimeout(defaultWait))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	js, err := jsapi.New(nc, jsapi.Timeout(defaultWait))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "D", Subjects: []string{"d.>"}, Storage: jsapi.StorageMemory}); err != nil {
		t.Fatal(err)
	}
	b, err := kv.CreateBucket(ctx, js, kv.Config{Bucket: "dl", Storage: jsapi.StorageMemory})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	c, err := pull.CreateOrUpdate(ctx, js, "D", jsapi.ConsumerConfig{Durable: "w", AckPolicy: jsapi.AckExplicit})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := js.Publish(ctx, "d.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	m, err := c.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	jsOwn, err := jsapi.New(nc, jsapi.Timeout(defaultWait/2))
	if err != nil {
		t.Fatal(err)
	}
	return &deadlineEnv{proxy: p, nc: nc, js: js, jsOwn: jsOwn, kv: b, cons: c, msg: m}
}

// stall stops every byte between the client and the server, both ways.
func (e *deadlineEnv) stall() {
	e.proxy.Stall(faultproxy.Up, true)
	e.proxy.Stall(faultproxy.Down, true)
}

// TestDeadlineRule: every blocking call of the public packages ends by its
// context or its default timeout alike. A passed deadline, the context's
// or the call's default, gives an error matching both
// context.DeadlineExceeded and conn.ErrTimeout; a canceled context, one
// matching context.Canceled.
func TestDeadlineRule(t *testing.T) {
	e := newDeadlineEnv(t)
	e.stall()

	calls := []struct {
		name string
		call func(ctx context.Context) error
		// noDefault: the call has no default timeout of its own shorter
		// than the test's patience (it waits as long as its context).
		noDefault bool
	}{
		{name: "conn.Request", call: func(ctx context.Context) error {
			_, err := e.nc.Request(ctx, "nobody.answers", nil)
			return err
		}},
		{name: "conn.RequestMsg", call: func(ctx context.Context) error {
			_, err := e.nc.RequestMsg(ctx, "nobody.answers", nil, nil)
			return err
		}},
		{name: "conn.Flush", call: e.nc.Flush},
		{name: "conn.RTT", call: func(ctx context.Context) error {
			_, err := e.nc.RTT(ctx)
			return err
		}},
		{name: "jsapi.Stream", call: func(ctx context.Context) error {
			_, err := e.js.Stream(ctx, "D")
			return err
		}},
		{name: "jsapi.Stream (JS Timeout of its own)", call: func(ctx context.Context) error {
			_, err := e.jsOwn.Stream(ctx, "D")
			return err
		}},
		{name: "jsapi.Publish (JS Timeout of its own)", call: func(ctx context.Context) error {
			_, err := e.jsOwn.Publish(ctx, "d.a", []byte("x"))
			return err
		}},
		{name: "jsapi.AccountInfo", call: func(ctx context.Context) error {
			_, err := e.js.AccountInfo(ctx)
			return err
		}},
		{name: "jsapi.Publish", call: func(ctx context.Context) error {
			_, err := e.js.Publish(ctx, "d.a", []byte("x"))
			return err
		}},
		{name: "jsapi.Msg.AckSync", call: e.msg.AckSync},
		{name: "kv.Get", call: func(ctx context.Context) error {
			_, err := e.kv.Get(ctx, "k")
			return err
		}},
		{name: "kv.Put", call: func(ctx context.Context) error {
			_, err := e.kv.Put(ctx, "k", []byte("w"))
			return err
		}},
		// Fetch and Next wait DefaultFetchWait (30 s) for a context without
		// deadline: pull's TestSynctestDefaultFetchWait covers it on a
		// fake clock.
		{name: "pull.Consumer.Next", noDefault: true, call: func(ctx context.Context) error {
			_, err := e.cons.Next(ctx)
			return err
		}},
		{name: "pull.Consumer.Fetch", noDefault: true, call: func(ctx context.Context) error {
			_, err := e.cons.Fetch(ctx, 10)
			return err
		}},
		{name: "pull.Consumer.Info", call: func(ctx context.Context) error {
			_, err := e.cons.Info(ctx)
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			// The context's deadline.
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			err := c.call(ctx)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, conn.ErrTimeout) {
				t.Errorf("context deadline: %v (%T); want DeadlineExceeded and ErrTimeout", err, err)
			}

			// A canceled context.
			ctx, cancel = context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			err = c.call(ctx)
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Errorf("canceled context: %v (%T); want Canceled", err, err)
			}
			if errors.Is(err, conn.ErrTimeout) {
				t.Errorf("canceled context: %v also matches ErrTimeout", err)
			}

			// No deadline: the call's default timeout.
			if c.noDefault {
				return
			}
			err = c.call(context.Background())
			if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, conn.ErrTimeout) {
				t.Errorf("default timeout: %v (%T); want DeadlineExceeded and ErrTimeout", err, err)
			}
		})
	}
}
