package compat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/micro"
	"github.com/natsio/natsio/objstore"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/pull"
)

// newJS connects to s and returns a JetStream view of the connection.
func newJS(t *testing.T, s *server, opts ...jsapi.Option) *jsapi.JS {
	t.Helper()
	js, err := jsapi.New(connect(t, s), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// mkStream creates a stream capturing "<name>.>" (memory storage).
func mkStream(t *testing.T, js *jsapi.JS, cfg jsapi.StreamConfig) *jsapi.Stream {
	t.Helper()
	if len(cfg.Subjects) == 0 {
		cfg.Subjects = []string{cfg.Name + ".>"}
	}
	if cfg.Storage == "" {
		cfg.Storage = jsapi.StorageMemory
	}
	st, err := js.CreateStream(testCtx(t), cfg)
	if err != nil {
		t.Fatalf("create stream %s: %v", cfg.Name, err)
	}
	t.Cleanup(func() { _ = js.DeleteStream(context.Background(), cfg.Name) })
	return st
}

// publishN publishes n messages "0"…"n-1" to subject.
func publishN(t *testing.T, js *jsapi.JS, subject string, n int) {
	t.Helper()
	for i := range n {
		if _, err := js.Publish(testCtx(t), subject, fmt.Appendf(nil, "%d", i)); err != nil {
			t.Fatal(err)
		}
	}
}

func runJetStream(t *testing.T, v version, s *server) {
	t.Run("stream", func(t *testing.T) {
		record(t, v, "stream create, info, update, list, delete", cellWorks)
		js := newJS(t, s)
		ctx := testCtx(t)
		st := mkStream(t, js, jsapi.StreamConfig{Name: "CRUD", MaxMsgs: 10})
		publishN(t, js, "CRUD.a", 3)
		info, err := st.Info(ctx)
		if err != nil || info.State.Msgs != 3 {
			t.Fatalf("info %+v, %v", info, err)
		}
		cfg := info.Config
		cfg.MaxMsgs = 2
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if info, err = st.Info(ctx); err != nil || info.State.Msgs != 2 || info.Config.MaxMsgs != 2 {
			t.Fatalf("after update: %+v, %v", info, err)
		}
		found := false
		for name, err := range js.StreamNames(ctx, "") {
			if err != nil {
				t.Fatal(err)
			}
			found = found || name == "CRUD"
		}
		if !found {
			t.Fatal("stream not listed")
		}
		if err := js.DeleteStream(ctx, "CRUD"); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Stream(ctx, "CRUD"); !errors.Is(err, jsapi.ErrStreamNotFound) {
			t.Fatalf("after delete: %v, want ErrStreamNotFound", err)
		}
	})
	t.Run("expectations", func(t *testing.T) {
		record(t, v, "publish expectations and dedup", cellWorks)
		js := newJS(t, s)
		ctx := testCtx(t)
		mkStream(t, js, jsapi.StreamConfig{Name: "EXP"})
		a1, err := js.Publish(ctx, "EXP.a", []byte("1"), jsapi.MsgID("m1"), jsapi.ExpectStream("EXP"), jsapi.ExpectLastSeq(0))
		if err != nil || a1.Sequence != 1 || a1.Duplicate {
			t.Fatalf("first: %+v, %v", a1, err)
		}
		a2, err := js.Publish(ctx, "EXP.a", []byte("1"), jsapi.MsgID("m1"))
		if err != nil || !a2.Duplicate || a2.Sequence != 1 {
			t.Fatalf("duplicate: %+v, %v", a2, err)
		}
		if _, err := js.Publish(ctx, "EXP.a", nil, jsapi.ExpectLastSeq(5)); !errors.Is(err, jsapi.ErrWrongLastSequence) {
			t.Fatalf("wrong last seq: %v", err)
		}
		if _, err := js.Publish(ctx, "EXP.a", nil, jsapi.ExpectLastSubjectSeq(7)); !errors.Is(err, jsapi.ErrWrongLastSequence) {
			t.Fatalf("wrong last subject seq: %v", err)
		}
		if _, err := js.Publish(ctx, "EXP.a", nil, jsapi.ExpectLastMsgID("nope")); !errors.Is(err, jsapi.ErrWrongLastMsgID) {
			t.Fatalf("wrong last msg id: %v", err)
		}
		if _, err := js.Publish(ctx, "EXP.a", nil, jsapi.ExpectStream("OTHER")); !errors.Is(err, jsapi.ErrWrongStream) {
			t.Fatalf("wrong stream: %v", err)
		}
		if a, err := js.Publish(ctx, "EXP.b", []byte("2"), jsapi.ExpectLastSubjectSeq(0), jsapi.ExpectLastMsgID("m1")); err != nil || a.Sequence != 2 {
			t.Fatalf("right expectations: %+v, %v", a, err)
		}
	})
	t.Run("fetch", func(t *testing.T) {
		record(t, v, "pull fetch with acks", cellWorks)
		js := newJS(t, s)
		ctx := testCtx(t)
		mkStream(t, js, jsapi.StreamConfig{Name: "FETCH"})
		publishN(t, js, "FETCH.x", 5)
		info, err := js.CreateConsumer(ctx, "FETCH", jsapi.ConsumerConfig{Durable: "d"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := pull.FromInfo(js, info)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for got < 5 {
			msgs, err := c.Fetch(ctx, 5-got)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if string(m.Data) != fmt.Sprint(got) {
					t.Fatalf("message %d is %q", got, m.Data)
				}
				if err := m.AckSync(ctx); err != nil {
					t.Fatal(err)
				}
				got++
			}
		}
		info, err = c.Info(ctx)
		if err != nil || info.NumAckPending != 0 || info.AckFloor.Stream != 5 {
			t.Fatalf("consumer after acks: %+v, %v", info, err)
		}
	})
	t.Run("consume", func(t *testing.T) {
		record(t, v, "pull consume with acks", cellWorks)
		js := newJS(t, s)
		ctx := testCtx(t)
		mkStream(t, js, jsapi.StreamConfig{Name: "CONS"})
		info, err := js.CreateConsumer(ctx, "CONS", jsapi.ConsumerConfig{Durable: "d"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := pull.FromInfo(js, info)
		if err != nil {
			t.Fatal(err)
		}
		publishN(t, js, "CONS.x", 20)
		got := 0
		for m, err := range c.Messages(ctx, pull.MaxMessages(7)) {
			if err != nil {
				t.Fatal(err)
			}
			if string(m.Data) != fmt.Sprint(got) {
				t.Fatalf("message %d is %q", got, m.Data)
			}
			if err := m.AckSync(ctx); err != nil {
				t.Fatal(err)
			}
			if got++; got == 20 {
				break
			}
		}
		info, err = c.Info(ctx)
		if err != nil || info.NumAckPending != 0 || info.AckFloor.Stream != 20 {
			t.Fatalf("consumer after acks: %+v, %v", info, err)
		}
	})
	t.Run("ordered", func(t *testing.T) {
		record(t, v, "ordered consumer", cellWorks)
		js := newJS(t, s)
		ctx := testCtx(t)
		mkStream(t, js, jsapi.StreamConfig{Name: "ORD"})
		publishN(t, js, "ORD.x", 10)
		oc, err := ordered.New(ctx, js, "ORD", ordered.Config{})
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for m, err := range oc.Messages(ctx, ordered.UntilDrained()) {
			if err != nil {
				t.Fatal(err)
			}
			if string(m.Data) != fmt.Sprint(got) {
				t.Fatalf("message %d is %q", got, m.Data)
			}
			got++
		}
		if got != 10 {
			t.Fatalf("%d messages, want 10", got)
		}
	})
	t.Run("kv", func(t *testing.T) {
		record(t, v, "KV (bucket TTL)", cellWorks)
		js := newJS(t, s)
		ctx := testCtx(t)
		b, err := kv.CreateBucket(ctx, js, kv.Config{Bucket: "cfg", History: 3, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kv.DeleteBucket(context.Background(), js, "cfg") })
		r1, err := b.Put(ctx, "k", []byte("v1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Update(ctx, "k", []byte("v2"), r1); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Update(ctx, "k", []byte("v3"), r1); !errors.Is(err, kv.ErrRevisionMismatch) {
			t.Fatalf("stale update: %v", err)
		}
		e, err := b.Get(ctx, "k")
		if err != nil || string(e.Value) != "v2" {
			t.Fatalf("get: %+v, %v", e, err)
		}
		if _, err := b.Create(ctx, "k", []byte("x")); !errors.Is(err, kv.ErrKeyExists) {
			t.Fatalf("create existing: %v", err)
		}
		if err := b.Delete(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Get(ctx, "k"); !errors.Is(err, kv.ErrKeyNotFound) {
			t.Fatalf("get deleted: %v", err)
		}
		st, err := b.Status(ctx)
		if err != nil || st.TTL != time.Hour {
			t.Fatalf("status %+v, %v", st, err)
		}
	})
	t.Run("objstore", func(t *testing.T) {
		record(t, v, "object store", cellWorks)
		js := newJS(t, s)
		ctx := testCtx(t)
		os, err := objstore.CreateStore(ctx, js, objstore.Config{Bucket: "files"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = objstore.DeleteStore(context.Background(), js, "files") })
		data := bytes.Repeat([]byte("0123456789abcdef"), 40000) // 640 kB: five chunks
		if _, err := os.PutBytes(ctx, "blob", data); err != nil {
			t.Fatal(err)
		}
		got, err := os.GetBytes(ctx, "blob")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("get: %d bytes, %v", len(got), err)
		}
	})
	t.Run("micro", func(t *testing.T) {
		record(t, v, "micro service", cellWorks)
		nc := connect(t, s)
		svc, err := micro.AddService(nc, micro.Config{Name: "echo", Version: "1.0.0"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = svc.Stop(context.Background()) })
		if err := svc.AddEndpoint("say", micro.HandlerFunc(func(r micro.Request) { _ = r.Respond(append([]byte("echo:"), r.Data()...)) })); err != nil {
			t.Fatal(err)
		}
		r, err := nc.Request(testCtx(t), "say", []byte("hi"))
		if err != nil || string(r.Data) != "echo:hi" {
			t.Fatalf("request: %v, %v", r, err)
		}
		pings, err := micro.Ping(testCtx(t), nc, "echo")
		if err != nil || len(pings) != 1 {
			t.Fatalf("ping: %v, %v", pings, err)
		}
	})
}
