package jsapi_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// TestAccountInfo: $JS.API.INFO reports the account's limits, its streams
// and consumers, the memory they use, its API counters and the server's
// API level.
func TestAccountInfo(t *testing.T) {
	s := natstest.NewServer(t, natstest.ConfigText(`
accounts {
	A {
		jetstream { max_mem: 64MB, max_file: 1GB, max_streams: 10, max_consumers: 20 }
		users [{ user: a, password: a }]
	}
}`))
	nc := connect(t, s.URL(), conn.UserInfo("a", "a"))
	js := newJS(t, nc)
	ctx := ctxT(t)

	ai, err := js.AccountInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := jsapi.AccountLimits{MaxMemory: 64 << 20, MaxStore: 1 << 30, MaxStreams: 10, MaxConsumers: 20}
	if ai.Limits != want {
		t.Fatalf("limits %+v, want %+v", ai.Limits, want)
	}
	if ai.Streams != 0 || ai.Consumers != 0 || ai.Memory != 0 {
		t.Fatalf("a fresh account reports %d streams, %d consumers, %d bytes", ai.Streams, ai.Consumers, ai.Memory)
	}
	if ai.API.Level != server.JSApiLevel {
		t.Fatalf("API level %d, want the server's %d", ai.API.Level, server.JSApiLevel)
	}

	for _, name := range []string{"ONE", "TWO"} {
		if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: jsapi.StorageMemory, MaxBytes: 1 << 20}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ stream, name string }{{"ONE", "c1"}, {"ONE", "c2"}, {"TWO", "c3"}} {
		if _, err := js.CreateConsumer(ctx, c.stream, jsapi.ConsumerConfig{Durable: c.name, AckPolicy: jsapi.AckExplicit}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.Publish(ctx, "ONE.x", make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Stream(ctx, "MISSING"); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("info of a missing stream: %v", err)
	}
	after, err := js.AccountInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Streams != 2 || after.Consumers != 3 {
		t.Fatalf("%d streams and %d consumers, want 2 and 3", after.Streams, after.Consumers)
	}
	if after.Memory < 1000 || after.Store != 0 {
		t.Fatalf("memory %d, storage %d after a 1000-byte message in a memory stream", after.Memory, after.Store)
	}
	if after.API.Total <= ai.API.Total || after.API.Errors <= ai.API.Errors {
		t.Fatalf("API counters %+v then %+v: want more requests and at least one more error", ai.API, after.API)
	}
}

// TestAPILevel: the level comes from INFO's api_lvl, which a 2.15 server
// sends; without it (a fake server), from $JS.API.INFO.
func TestAPILevel(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	if got := nc.ServerInfo().APILevel; got != server.JSApiLevel {
		t.Fatalf("INFO api_lvl %d, want %d", got, server.JSApiLevel)
	}
	lvl, err := js.APILevel(ctx)
	if err != nil || lvl != server.JSApiLevel {
		t.Fatalf("APILevel %d, %v; want %d", lvl, err, server.JSApiLevel)
	}

	var infoRequests atomic.Int32
	fs := fakeserver.New(t, fakeserver.WithHandler(fakeserver.Responder(fakeserver.DefaultInfo().With("jetstream", true),
		func(op *proto.Op) *fakeserver.Reply {
			if string(op.Subject) != "$JS.API.INFO" {
				return nil
			}
			infoRequests.Add(1)
			return &fakeserver.Reply{Body: []byte(`{"type":"io.nats.jetstream.api.v1.account_info_response","memory":0,"storage":0,"streams":0,"consumers":0,"limits":{"max_memory":-1,"max_storage":-1,"max_streams":-1,"max_consumers":-1},"api":{"level":3,"total":1,"errors":0}}`)}
		})))
	fjs := newJS(t, connect(t, fs.URL()))
	lvl, err = fjs.APILevel(ctx)
	if err != nil || lvl != 3 {
		t.Fatalf("APILevel without api_lvl in INFO: %d, %v; want 3 from $JS.API.INFO", lvl, err)
	}
	if err := fjs.Conn().Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := infoRequests.Load(); n != 1 {
		t.Fatalf("%d $JS.API.INFO requests, want 1", n)
	}
}
