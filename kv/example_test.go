package kv_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/natstest"
)

// exampleJS starts an embedded JetStream server and returns a JetStream
// view of a connection to it, and a cleanup.
func exampleJS() (*jsapi.JS, func()) {
	s, err := natstest.Start()
	if err != nil {
		panic(err)
	}
	url, stop := s.URL(), s.Close
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, url)
	if err != nil {
		panic(err)
	}
	js, _ := jsapi.New(nc)
	return js, func() { nc.Close(); stop() }
}

// Feature flags distributed to every instance: each one watches the
// flags, applies the initial values, and then every change.
func Example_featureFlags() {
	js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	flags, err := kv.CreateBucket(ctx, js, kv.Config{Bucket: "flags", History: 5})
	if err != nil {
		fmt.Println(err)
		return
	}
	flags.Put(ctx, "ui.dark-mode", []byte("on"))
	flags.Put(ctx, "checkout.v2", []byte("off"))

	ready, changes := false, 0
	for e, err := range flags.WatchAll(ctx) {
		if err != nil {
			fmt.Println("watch:", err)
			return
		}
		if e == nil {
			// Initial values applied: from here on, every change arrives.
			fmt.Println("-- ready --")
			ready = true
			flags.Put(ctx, "checkout.v2", []byte("on"))
			flags.Delete(ctx, "ui.dark-mode")
			continue
		}
		fmt.Printf("%s %s=%s\n", e.Operation, e.Key, e.Value)
		if ready {
			if changes++; changes == 2 {
				break
			}
		}
	}
	// Output:
	// PUT ui.dark-mode=on
	// PUT checkout.v2=off
	// -- ready --
	// PUT checkout.v2=on
	// DEL ui.dark-mode=
}

// A distributed lock: Create succeeds for one owner only; the owner
// releases with a delete conditioned on its own revision, so it can never
// release a lock someone else took meanwhile. Update is the general
// compare-and-set.
func Example_distributedLock() {
	js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	locks, _ := kv.CreateBucket(ctx, js, kv.Config{Bucket: "locks"})

	rev, err := locks.Create(ctx, "invoice-42", []byte("worker-a"))
	fmt.Println("worker-a acquires:", err == nil)
	_, err = locks.Create(ctx, "invoice-42", []byte("worker-b"))
	fmt.Println("worker-b acquires:", err == nil, errors.Is(err, kv.ErrKeyExists))

	err = locks.Delete(ctx, "invoice-42", kv.LastRevision(rev))
	fmt.Println("worker-a releases:", err == nil)
	_, err = locks.Create(ctx, "invoice-42", []byte("worker-b"))
	fmt.Println("worker-b acquires:", err == nil)

	// Compare-and-set on a counter: a stale revision is a conflict.
	r1, _ := locks.Put(ctx, "counter", []byte("1"))
	_, err = locks.Update(ctx, "counter", []byte("2"), r1)
	fmt.Println("update from the latest revision:", err == nil)
	_, err = locks.Update(ctx, "counter", []byte("2"), r1)
	fmt.Println("update from a stale revision:", errors.Is(err, kv.ErrRevisionMismatch))
	// Output:
	// worker-a acquires: true
	// worker-b acquires: false true
	// worker-a releases: true
	// worker-b acquires: true
	// update from the latest revision: true
	// update from a stale revision: true
}

// A service registry: instances register with a TTL and vanish when they
// stop refreshing; the server's limit marker tells watchers.
func Example_serviceRegistry() {
	js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := kv.CreateBucket(ctx, js, kv.Config{Bucket: "services", LimitMarkerTTL: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	// api-1 registers for a second; api-2 registers without a TTL.
	reg.Create(ctx, "api.1", []byte("10.0.0.1:8080"), kv.KeyTTL(time.Second))
	reg.Create(ctx, "api.2", []byte("10.0.0.2:8080"))
	keys, _ := reg.Keys(ctx, "api.*")
	fmt.Println("registered:", keys)

	for e, err := range reg.Watch(ctx, "api.*", kv.UpdatesOnly()) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if e != nil && e.Operation != kv.OpPut {
			fmt.Println("expired:", e.Key)
			break
		}
	}
	keys, _ = reg.Keys(ctx, "api.*")
	fmt.Println("registered:", keys)
	// Output:
	// registered: [api.1 api.2]
	// expired: api.1
	// registered: [api.2]
}
