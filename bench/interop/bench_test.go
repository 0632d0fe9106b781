package interop_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
)

const childEnv = "NATSIO_INTEROP_SERVER_CHILD"

// TestMain runs a server instead of the tests when started by
// serverProcess: benchmarks then count the client's CPU and allocations
// alone.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		// The store is the parent's (serverProcess): os.Exit below would
		// skip a deferred removal here.
		dir := os.Getenv(childEnv + "_DIR")
		s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, JetStream: true, StoreDir: dir})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		go s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			os.Exit(2)
		}
		fmt.Printf("URL %s\n", s.ClientURL())
		io.Copy(io.Discard, os.Stdin)
		s.Shutdown()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serverProcess(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// b.TempDir's removal runs after the process has stopped (cleanups run
	// last-in, first-out).
	cmd.Env = append(os.Environ(), childEnv+"=1", childEnv+"_DIR="+b.TempDir())
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "URL ") {
		b.Fatalf("server process: %q %v", line, err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "URL "))
}

func natsgoBucket(b *testing.B) jetstream.KeyValue {
	nc, err := nats.Connect(serverProcess(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	kvb, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: "bench", Storage: jetstream.MemoryStorage})
	if err != nil {
		b.Fatal(err)
	}
	return kvb
}

func natsioBucket(b *testing.B) *kv.Bucket {
	ctx := context.Background()
	nc, err := conn.Connect(ctx, serverProcess(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { nc.Close() })
	js, _ := jsapi.New(nc)
	kvb, err := kv.CreateBucket(ctx, js, kv.Config{Bucket: "bench", Storage: jsapi.StorageMemory})
	if err != nil {
		b.Fatal(err)
	}
	return kvb
}

// Side by side, same server process, same memory bucket, 128-byte values,
// a context with a deadline.
func BenchmarkKVPut128NatsGo(b *testing.B) {
	kvb := natsgoBucket(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	val := make([]byte, 128)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kvb.Put(ctx, "key.1", val); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKVGet128NatsGo(b *testing.B) {
	kvb := natsgoBucket(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	kvb.Put(ctx, "key.1", make([]byte, 128))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kvb.Get(ctx, "key.1"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKVPut128Natsio(b *testing.B) {
	kvb := natsioBucket(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	val := make([]byte, 128)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kvb.Put(ctx, "key.1", val); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKVGet128Natsio(b *testing.B) {
	kvb := natsioBucket(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	kvb.Put(ctx, "key.1", make([]byte, 128))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kvb.Get(ctx, "key.1"); err != nil {
			b.Fatal(err)
		}
	}
}
