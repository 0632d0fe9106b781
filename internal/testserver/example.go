package testserver

import (
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ForExample starts an embedded server on a free loopback port for a
// runnable Example function, which has no *testing.T: it panics when the
// server cannot start. With jetStream, JetStream runs on a fresh store
// directory. stop shuts the server down, waits for it, and removes the
// store.
func ForExample(jetStream bool) (url string, stop func()) {
	opts := &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	if jetStream {
		dir, err := os.MkdirTemp("", "natsio-example-*")
		if err != nil {
			panic(err)
		}
		opts.JetStream, opts.StoreDir = true, dir
	}
	s, err := server.NewServer(opts)
	if err != nil {
		panic(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		panic("testserver: example server not ready")
	}
	return s.ClientURL(), func() {
		s.Shutdown()
		s.WaitForShutdown()
		if opts.StoreDir != "" {
			os.RemoveAll(opts.StoreDir)
		}
	}
}
