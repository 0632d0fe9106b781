package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/natsio/natsio/bench/internal/clients"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/pause"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/objstore"
)

// Fixtures of the JetStream, KV and object store scenarios.
//
// The harness creates every stream fresh before each run (Setup), with one
// client-neutral path: natsio, in the harness process, never in the process
// being measured. The stream is the same whichever client then runs, and
// the measured client only binds to it and does the timed work. After the
// run, Verify checks the stream's (and consumers') state exactly, which is
// what verifies these runs (their in_msgs differ by client: API requests,
// pulls, acks, flow control), and Teardown deletes the stream.
//
// Consumer scenarios read exactly what their runs need: the stream holds
// S = max(Warmup, N) messages; the warm-up run reads its last Warmup, the
// timed run its last N (durable consumers, or ordered reads, starting at
// S-count+1), so that no pull is ever left waiting for more messages and
// no message is left for the next run.

const (
	consumerWarmup = "warmup"
	consumerTimed  = "timed"
	storedObject   = "obj"
	// maxAckPending of the durable consumers: the server's default,
	// set explicitly so that it is the same for every client.
	maxAckPending = 1000
	// fillChunk is how many messages Setup publishes before waiting for
	// the stream to store them (the server's ingest queue holds 100k).
	fillChunk = 20_000
)

// ackFloorWait bounds how long Verify waits for a consumer's acks.
var ackFloorWait = 10 * time.Second

// hasFixture reports whether the scenario uses a stream.
func (s Scenario) hasFixture() bool {
	switch s.Kind {
	case Publish, PubSub, Request, AfterLoop, IdleConns, ManySubs, ManyConns, InFlight:
		return false
	}
	return true
}

func (s Scenario) token() string { return strings.ReplaceAll(s.Name, ".", "_") }

// bucketName is the KV bucket or object store of the scenario, "" for
// other kinds.
func (s Scenario) bucketName() string {
	switch s.Kind {
	case KVPut, KVGet, ObjPut, ObjGet:
		return "bench_" + s.token()
	}
	return ""
}

// streamName is the scenario's stream, "" for kinds without one.
func (s Scenario) streamName() string {
	switch s.Kind {
	case Publish, PubSub, Request, AfterLoop:
		return ""
	case KVPut, KVGet:
		return "KV_" + s.bucketName()
	case ObjPut, ObjGet:
		return "OBJ_" + s.bucketName()
	}
	return "BENCH_" + s.token()
}

// stored is how many messages the consumer scenarios' stream holds.
func (s Scenario) stored(plan Plan) int { return max(plan.Warmup, plan.N) }

// startSeq is the first sequence of a run reading count messages.
func (s Scenario) startSeq(plan Plan, count int) uint64 {
	return uint64(s.stored(plan) - count + 1)
}

func (s Scenario) storage() jsapi.StorageType {
	if s.Storage == file {
		return jsapi.StorageFile
	}
	return jsapi.StorageMemory
}

// admin is the harness's own connection for fixtures.
type admin struct {
	nc *conn.Conn
	js *jsapi.JS
}

func dialAdmin(ctx context.Context, url string) (*admin, error) {
	nc, err := conn.Connect(ctx, url, conn.Name("bench-setup"))
	if err != nil {
		return nil, err
	}
	js, err := jsapi.New(nc, jsapi.Timeout(30*time.Second))
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &admin{nc: nc, js: js}, nil
}

func (a *admin) deleteStream(ctx context.Context, name string) error {
	if err := a.js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jsapi.ErrStreamNotFound) {
		return fmt.Errorf("delete stream %s: %w", name, err)
	}
	return nil
}

// createEmpty creates the stream cfg and makes sure it starts empty, at
// sequence 1. A file stream deleted and created again under the same name
// in quick succession can come back with the old messages: nats-server
// renames a deleted stream's directory and removes it in the background,
// and when a second deletion finds the renamed directory still there, the
// original directory stays and the next creation recovers it (seen once in
// a few hundred runs of the scenario tests). A creation that lands while
// that directory is being removed fails with err_code 10049 ("error
// creating store for stream") and is tried again.
func (a *admin) createEmpty(ctx context.Context, cfg jsapi.StreamConfig) error {
	for attempt := 0; ; attempt++ {
		retry, err := a.createOnce(ctx, cfg)
		if err != nil {
			return err
		}
		if !retry {
			return nil
		}
		if attempt == 10 {
			return fmt.Errorf("stream %s: not created empty after %d attempts", cfg.Name, attempt+1)
		}
		if err := pause.For(ctx, 50*time.Millisecond<<min(attempt, 4)); err != nil {
			return err
		}
	}
}

// storeFailed is nats-server's err_code for a stream store it could not
// create (JSStreamStoreFailedF).
const storeFailed = 10049

// createOnce creates cfg and reports whether to try again: the store could
// not be created yet, or the stream came back with old messages (it is
// deleted again first).
func (a *admin) createOnce(ctx context.Context, cfg jsapi.StreamConfig) (retry bool, err error) {
	if _, err := a.js.CreateStream(ctx, cfg); err != nil {
		var apiErr *jsapi.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == storeFailed {
			return true, nil
		}
		return false, fmt.Errorf("create stream: %w", err)
	}
	st, err := a.state(ctx, cfg.Name)
	if err != nil {
		return false, err
	}
	if st.LastSeq == 0 {
		return false, nil
	}
	return true, a.deleteStream(ctx, cfg.Name)
}

func (a *admin) state(ctx context.Context, stream string) (jsapi.StreamState, error) {
	st, err := a.js.Stream(ctx, stream)
	if err != nil {
		return jsapi.StreamState{}, fmt.Errorf("stream %s: %w", stream, err)
	}
	return st.CachedInfo().State, nil
}

// fill publishes count messages of size bytes to subject and waits until
// stream holds them all.
func (a *admin) fill(ctx context.Context, stream, subject string, size, count int) error {
	data := clients.Payload(size)
	for sent := 0; sent < count; {
		k := min(fillChunk, count-sent)
		for range k {
			if err := a.nc.Publish(subject, data); err != nil {
				return err
			}
		}
		if err := a.nc.Flush(ctx); err != nil {
			return err
		}
		sent += k
		deadline := time.Now().Add(30 * time.Second)
		for {
			st, err := a.state(ctx, stream)
			if err != nil {
				return err
			}
			if st.Msgs == uint64(sent) && st.LastSeq == uint64(sent) {
				break
			}
			if st.Msgs > uint64(sent) || time.Now().After(deadline) {
				return fmt.Errorf("fill %s: stream holds %d messages (last sequence %d), %d published", stream, st.Msgs, st.LastSeq, sent)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	return nil
}

// Setup creates the scenario's stream afresh for a run under plan (the
// same plan the measured client gets), fills it and creates its durable
// consumers. It does nothing for the core kinds.
func (s Scenario) Setup(ctx context.Context, url string, plan Plan) error {
	if !s.hasFixture() {
		return nil
	}
	a, err := dialAdmin(ctx, url)
	if err != nil {
		return err
	}
	defer a.nc.Close()
	if err := a.deleteStream(ctx, s.streamName()); err != nil {
		return err
	}
	switch s.Kind {
	case KVPut, KVGet:
		b, err := kv.CreateBucket(ctx, a.js, kv.Config{Bucket: s.bucketName(), Storage: s.storage()})
		if err != nil {
			return fmt.Errorf("create bucket: %w", err)
		}
		if s.Kind == KVGet {
			data := clients.Payload(s.Size)
			for i := range s.Keys {
				if _, err := b.Put(ctx, clients.KVKey(i), data); err != nil {
					return fmt.Errorf("kv put: %w", err)
				}
			}
		}
		return nil
	case ObjPut, ObjGet:
		st, err := objstore.CreateStore(ctx, a.js, objstore.Config{Bucket: s.bucketName(), Storage: s.storage()})
		if err != nil {
			return fmt.Errorf("create object store: %w", err)
		}
		if s.Kind == ObjGet {
			if _, err := st.PutBytes(ctx, storedObject, clients.Payload(s.Size)); err != nil {
				return fmt.Errorf("object put: %w", err)
			}
		}
		return nil
	}
	cfg := jsapi.StreamConfig{Name: s.streamName(), Subjects: []string{s.Subject()}, Storage: s.storage()}
	fill := 0
	switch s.Kind {
	case FastPub:
		cfg.AllowBatchPublish = true
	case AtomicBatch:
		cfg.AllowAtomicPublish = true
	case GetBatch, DirectGet:
		cfg.AllowDirect = true
		fill = s.Stored
	case JSFetch, JSConsume, JSOrdered:
		fill = s.stored(plan)
	}
	if err := a.createEmpty(ctx, cfg); err != nil {
		return err
	}
	if fill > 0 {
		if err := a.fill(ctx, cfg.Name, s.Subject(), s.Size, fill); err != nil {
			return err
		}
	}
	if s.Kind == JSFetch || s.Kind == JSConsume {
		for _, c := range []struct {
			name  string
			count int
		}{{consumerWarmup, plan.Warmup}, {consumerTimed, plan.N}} {
			_, err := a.js.CreateConsumer(ctx, cfg.Name, jsapi.ConsumerConfig{
				Durable:       c.name,
				AckPolicy:     jsapi.AckExplicit,
				MaxAckPending: maxAckPending,
				DeliverPolicy: jsapi.DeliverByStartSequence,
				OptStartSeq:   s.startSeq(plan, c.count),
			})
			if err != nil {
				return fmt.Errorf("create consumer %s: %w", c.name, err)
			}
		}
	}
	return nil
}

// Verify checks, after a run of plan (Warmup and the N the run actually
// timed), that the stream holds exactly what the run stored, or, for the
// consumer scenarios, that every message was delivered once and
// acknowledged.
func (s Scenario) Verify(ctx context.Context, url string, plan Plan) error {
	if !s.hasFixture() {
		return nil
	}
	a, err := dialAdmin(ctx, url)
	if err != nil {
		return err
	}
	defer a.nc.Close()
	stream := s.streamName()
	want := func(msgs, last int) error {
		st, err := a.state(ctx, stream)
		if err != nil {
			return err
		}
		if st.Msgs != uint64(msgs) || st.LastSeq != uint64(last) {
			return fmt.Errorf("stream %s holds %d messages, last sequence %d; want %d, %d", stream, st.Msgs, st.LastSeq, msgs, last)
		}
		return nil
	}
	total := plan.Warmup + plan.N
	switch s.Kind {
	case JSPubSync, JSPubAsync, FastPub, AtomicBatch:
		return want(total, total)
	case KVPut:
		// Each writer cycles over the keys from the first one.
		return want(min(total/max(plan.Writers, 1), s.Keys), total)
	case KVGet:
		return want(s.Keys, s.Keys)
	case GetBatch, DirectGet:
		return want(s.Stored, s.Stored)
	case JSOrdered:
		return want(s.stored(plan), s.stored(plan))
	case JSFetch, JSConsume:
		if err := want(s.stored(plan), s.stored(plan)); err != nil {
			return err
		}
		for _, c := range []struct {
			name  string
			count int
		}{{consumerWarmup, plan.Warmup}, {consumerTimed, plan.N}} {
			if err := a.verifyConsumer(ctx, stream, c.name, s.stored(plan), c.count); err != nil {
				return err
			}
		}
		return nil
	case ObjPut, ObjGet:
		objects := 1
		if s.Kind == ObjPut {
			objects = total
		}
		st, err := objstore.Bind(ctx, a.js, s.bucketName())
		if err != nil {
			return err
		}
		n, chunks := 0, 0
		for info, err := range st.List(ctx) {
			if err != nil {
				return err
			}
			if info.Size != uint64(s.Size) {
				return fmt.Errorf("object %s of %d bytes, want %d", info.Name, info.Size, s.Size)
			}
			n++
			chunks += int(info.Chunks)
		}
		if n != objects {
			return fmt.Errorf("object store holds %d objects, want %d", n, objects)
		}
		// Every chunk and one meta message per object, nothing else.
		state, err := a.state(ctx, stream)
		if err != nil {
			return err
		}
		if state.Msgs != uint64(chunks+n) {
			return fmt.Errorf("object store stream holds %d messages, want %d chunks + %d metas", state.Msgs, chunks, n)
		}
		return nil
	}
	return fmt.Errorf("no verification for kind %q", s.Kind)
}

// verifyConsumer checks that the consumer delivered count messages, each
// once, up to the stream's last sequence, and that all are acknowledged.
// Acks are processed by the server asynchronously: it waits up to
// ackFloorWait for the ack floor.
func (a *admin) verifyConsumer(ctx context.Context, stream, name string, last, count int) error {
	deadline := time.Now().Add(ackFloorWait)
	for {
		ci, err := a.js.Consumer(ctx, stream, name)
		if err != nil {
			return fmt.Errorf("consumer %s: %w", name, err)
		}
		ok := ci.AckFloor.Stream == uint64(last) && ci.NumAckPending == 0
		if ok || time.Now().After(deadline) {
			if !ok || ci.NumRedelivered != 0 || ci.NumPending != 0 || ci.Delivered.Stream != uint64(last) ||
				ci.Delivered.Consumer != uint64(count) || ci.AckFloor.Consumer != uint64(count) {
				return fmt.Errorf("consumer %s: delivered %d (stream %d), ack floor %d (stream %d), ack pending %d, redelivered %d, pending %d; want %d delivered once and acknowledged up to stream sequence %d",
					name, ci.Delivered.Consumer, ci.Delivered.Stream, ci.AckFloor.Consumer, ci.AckFloor.Stream,
					ci.NumAckPending, ci.NumRedelivered, ci.NumPending, count, last)
			}
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Teardown deletes the scenario's stream.
func (s Scenario) Teardown(ctx context.Context, url string) error {
	if !s.hasFixture() {
		return nil
	}
	a, err := dialAdmin(ctx, url)
	if err != nil {
		return err
	}
	defer a.nc.Close()
	return a.deleteStream(ctx, s.streamName())
}
