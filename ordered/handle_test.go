package ordered_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// New creates the first server-side consumer, which the first read uses:
// one create for New and its first read together, one more per later
// read. What cannot work fails New at once.
func TestNew(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 3)
	mon, err := conn.Connect(e.ctx, e.s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	var creates atomic.Int64
	if _, err := mon.SubscribeInlineUnsafe("$JS.API.CONSUMER.CREATE.>", func(*conn.Msg) { creates.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := mon.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	// createsNow waits until the monitor has seen want creates (the
	// server may route a request to it after answering it), then reports
	// the count.
	createsNow := func(want int64) int64 {
		t.Helper()
		for i := 0; i < 500 && creates.Load() < want; i++ {
			if err := mon.Flush(e.ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond) // polling
		}
		return creates.Load()
	}

	oc, err := ordered.New(e.ctx, e.js, "O", ordered.Config{FilterSubjects: []string{"o.a"}, NamePrefix: "watch_"})
	if err != nil {
		t.Fatal(err)
	}
	if n := createsNow(1); n != 1 {
		t.Fatalf("%d creates by New", n)
	}
	info, err := oc.Info(e.ctx)
	if err != nil || info.Name != oc.Name() || info.NumPending != 3 || info.Config.AckPolicy != jsapi.AckNone ||
		info.Config.FilterSubject != "o.a" || !info.Config.MemoryStorage || info.Name[:6] != "watch_" {
		t.Fatalf("info after New: %+v %v", info, err)
	}
	if n := readAll(t, oc, e.ctx, 1); n != 3 {
		t.Fatalf("first read: %d", n)
	}
	if n := createsNow(1); n != 1 {
		t.Fatalf("%d creates after New and the first read, want 1", n)
	}
	e.publish(t, "o.a", 2)
	if n := readAll(t, oc, e.ctx, 4); n != 2 {
		t.Fatalf("second read: %d", n)
	}
	if n := createsNow(2); n != 2 {
		t.Fatalf("%d creates after a second read, want 2", n)
	}

	dead, cancel := context.WithCancel(e.ctx)
	cancel()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		js     *jsapi.JS
		stream string
		cfg    ordered.Config
		want   error
	}{
		{"missing stream", e.ctx, e.js, "NONE", ordered.Config{}, jsapi.ErrStreamNotFound},
		{"invalid stream name", e.ctx, e.js, "a.b", ordered.Config{}, jsapi.ErrInvalidName},
		{"invalid name prefix", e.ctx, e.js, "O", ordered.Config{NamePrefix: "a.b"}, jsapi.ErrInvalidName},
		{"negative inactive threshold", e.ctx, e.js, "O", ordered.Config{InactiveThreshold: -1}, conn.ErrInvalidOption},
		{"nil JS", e.ctx, nil, "O", ordered.Config{}, conn.ErrInvalidOption},
		{"nil ctx", nil, e.js, "O", ordered.Config{}, conn.ErrNilContext},
		{"dead ctx", dead, e.js, "O", ordered.Config{}, context.Canceled},
	} {
		if oc, err := ordered.New(tc.ctx, tc.js, tc.stream, tc.cfg); !errors.Is(err, tc.want) || oc != nil {
			t.Errorf("%s: %v, %v; want %v", tc.name, oc, err, tc.want)
		}
	}
	// Only the missing stream took a request: the rest failed before.
	if n := createsNow(3); n != 3 {
		t.Fatalf("%d creates after the failed News, want 3", n)
	}
}

// Info reports the current server-side consumer, during a read too; there
// is none between reads. Delete deletes it, ends a running read with
// ErrConsumerDeleted and refuses every later one.
func TestInfoAndDelete(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 5)

	// Delete before any read: the consumer New made is gone.
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	if countConsumers(t, e) != 1 {
		t.Fatal("New made no consumer")
	}
	if err := oc.Delete(e.ctx); err != nil {
		t.Fatal(err)
	}
	if n := countConsumers(t, e); n != 0 || oc.Name() != "" {
		t.Fatalf("%d consumers after Delete, name %q", n, oc.Name())
	}
	for _, err := range oc.Messages(e.ctx) {
		if !errors.Is(err, ordered.ErrConsumerDeleted) {
			t.Fatalf("Messages after Delete: %v", err)
		}
	}
	if _, err := oc.Consume(e.ctx, func(*jsapi.Msg) {}); !errors.Is(err, ordered.ErrConsumerDeleted) {
		t.Fatalf("Consume after Delete: %v", err)
	}
	if _, err := oc.Info(e.ctx); !errors.Is(err, ordered.ErrConsumerDeleted) {
		t.Fatalf("Info after Delete: %v", err)
	}
	if err := oc.Delete(e.ctx); err != nil {
		t.Fatalf("second Delete: %v", err)
	}

	// Info during a read and between reads; Delete during a read.
	oc = newOrdered(t, e.js, "O", ordered.Config{})
	n := 0
	var last error
	for m, err := range oc.Messages(e.ctx) {
		if err != nil {
			last = err
			break
		}
		md, _ := m.Metadata()
		n++
		switch n {
		case 2:
			info, err := oc.Info(e.ctx)
			if err != nil || info.Name != oc.Name() || info.Delivered.Stream < md.StreamSeq {
				t.Fatalf("Info during the read: %+v %v", info, err)
			}
		case 3:
			if err := oc.Delete(e.ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n != 3 || !errors.Is(last, ordered.ErrConsumerDeleted) {
		t.Fatalf("read %d, then %v; want 3 then ErrConsumerDeleted", n, last)
	}
	if c := countConsumers(t, e); c != 0 {
		t.Fatalf("%d consumers after Delete during a read", c)
	}

	oc = newOrdered(t, e.js, "O", ordered.Config{})
	if n := readAll(t, oc, e.ctx, 1); n != 5 {
		t.Fatalf("read %d of 5", n)
	}
	if _, err := oc.Info(e.ctx); !errors.Is(err, ordered.ErrNoConsumer) || !errors.Is(err, jsapi.ErrConsumerNotFound) {
		t.Fatalf("Info between reads: %v", err)
	}
}
