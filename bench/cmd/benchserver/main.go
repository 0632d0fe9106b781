// Command benchserver runs an embedded nats-server for the benchmark harness
// in a process of its own, so that the clients being measured never share a
// process (heap, GC, scheduler) with the server.
//
// It listens on a loopback port (random by default) with JetStream enabled in
// a temporary store directory, and monitoring on another random loopback
// port. Once the server accepts connections it prints one line
//
//	URL nats://127.0.0.1:PORT MONITOR http://127.0.0.1:PORT PID N
//
// on stdout. It shuts down and removes the store directory on SIGINT or
// SIGTERM, or when its stdin reaches end of file (the harness holds the
// write end of a pipe, so the server does not outlive a crashed harness).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("benchserver: ")
	host := flag.String("host", "127.0.0.1", "listen address")
	port := flag.Int("port", server.RANDOM_PORT, "client port (-1: random)")
	js := flag.Bool("js", true, "enable JetStream")
	watchStdin := flag.Bool("stdin", true, "shut down when stdin reaches EOF")
	flag.Parse()

	storeDir, err := os.MkdirTemp("", "natsio-benchserver-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(storeDir)

	opts := &server.Options{
		ServerName: "natsio-bench",
		Host:       *host,
		Port:       *port,
		HTTPHost:   *host,
		HTTPPort:   server.RANDOM_PORT,
		JetStream:  *js,
		StoreDir:   storeDir,
		NoLog:      true,
		NoSigs:     true,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		os.RemoveAll(storeDir)
		log.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		s.Shutdown()
		os.RemoveAll(storeDir)
		log.Fatal("server not ready after 20s")
	}
	mon := s.MonitorAddr()
	if mon == nil {
		s.Shutdown()
		os.RemoveAll(storeDir)
		log.Fatal("monitoring not listening")
	}
	fmt.Printf("URL %s MONITOR http://%s PID %d\n", s.ClientURL(), mon.String(), os.Getpid())

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	eof := make(chan struct{})
	if *watchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			close(eof)
		}()
	}
	select {
	case <-stop:
	case <-eof:
	}
	s.Shutdown()
	s.WaitForShutdown()
}
