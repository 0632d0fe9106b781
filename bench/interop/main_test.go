// Package interop_test checks that natsio's kv and objstore and nats.go's
// jetstream KV and object store read and write each other's buckets. It
// lives in the bench module, so that nats.go stays out of natsio's import
// graph; it holds tests only.
package interop_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// clients is one server with a connection from each client.
type clients struct {
	ctx context.Context
	// nats.go
	ngo *nats.Conn
	js  jetstream.JetStream
	// natsio
	nio *conn.Conn
	jsi *jsapi.JS
}

func start(t *testing.T) *clients {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	ngo, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ngo.Close)
	js, err := jetstream.New(ngo)
	if err != nil {
		t.Fatal(err)
	}
	nio, err := conn.Connect(ctx, srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nio.Close() })
	jsi, err := jsapi.New(nio)
	if err != nil {
		t.Fatal(err)
	}
	return &clients{ctx: ctx, ngo: ngo, js: js, nio: nio, jsi: jsi}
}
