package compat

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/pcgroup"
	"github.com/natsio/natsio/pull"
)

// apiLevel is the JetStream API level of the latest patch of each line
// under test.
func (v version) apiLevel() int {
	switch {
	case v.minor <= 10:
		return 0
	case v.minor == 11:
		return 1
	case v.minor == 12:
		return 3 // 2.12.5 and later; 2.12.0–2.12.4 report 2
	case v.minor == 14:
		return 4
	}
	return 5
}

// gated runs the check of feature row on v: works when v has the
// feature (2.minor or later), else refused, which must see a
// *jsapi.FeatureError and nothing stored or created.
func gated(t *testing.T, v version, s *server, row string, minor int, works, refused func(t *testing.T, admin, js *jsapi.JS)) {
	t.Run(row, func(t *testing.T) {
		admin, js := newJS(t, s), newJS(t, s)
		if v.has(minor) {
			record(t, v, row, cellWorks)
			works(t, admin, js)
			return
		}
		record(t, v, row, cellRefused)
		refused(t, admin, js)
	})
}

// wantRefused checks that err is the *jsapi.FeatureError of f for the
// server v, found before anything was sent: js's connection published
// nothing since out was read.
func wantRefused(t *testing.T, v version, js *jsapi.JS, out uint64, err error, f jsapi.Feature) {
	t.Helper()
	var fe *jsapi.FeatureError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v, want a *jsapi.FeatureError for %s", err, f)
	}
	if !errors.Is(err, jsapi.ErrServerTooOld) {
		t.Fatalf("%v does not match ErrServerTooOld", err)
	}
	if fe.Feature != f || fe.NeedVersion != f.Version() || fe.NeedAPILevel != f.APILevel() {
		t.Fatalf("feature error %+v, want feature %s (%s, level %d)", fe, f, f.Version(), f.APILevel())
	}
	if fe.ServerVersion != strings.TrimPrefix(v.name, "v") || fe.ServerAPILevel != v.apiLevel() || fe.Err != nil {
		t.Fatalf("feature error %+v, want server %s at level %d, refused before sending", fe, v.name, v.apiLevel())
	}
	if got := js.Conn().Stats().OutMsgs; got != out {
		t.Fatalf("%d messages sent before the refusal", got-out)
	}
}

// outMsgs is how many messages js's connection has published.
func outMsgs(js *jsapi.JS) uint64 { return js.Conn().Stats().OutMsgs }

// wantNoMsgs checks that stream holds no message.
func wantNoMsgs(t *testing.T, js *jsapi.JS, stream string) {
	t.Helper()
	st, err := js.Stream(testCtx(t), stream)
	if err != nil {
		t.Fatal(err)
	}
	if s := st.CachedInfo().State; s.Msgs != 0 || s.LastSeq != 0 {
		t.Fatalf("stream %s holds %d messages (last sequence %d), want none", stream, s.Msgs, s.LastSeq)
	}
}

// wantNoStream checks that stream does not exist.
func wantNoStream(t *testing.T, js *jsapi.JS, stream string) {
	t.Helper()
	if _, err := js.Stream(testCtx(t), stream); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("stream %s: %v, want ErrStreamNotFound", stream, err)
	}
}

// wantNoConsumer checks that the consumer does not exist.
func wantNoConsumer(t *testing.T, js *jsapi.JS, stream, name string) {
	t.Helper()
	if _, err := js.Consumer(testCtx(t), stream, name); !errors.Is(err, jsapi.ErrConsumerNotFound) {
		t.Fatalf("consumer %s: %v, want ErrConsumerNotFound", name, err)
	}
}

// refusedStream checks that creating a stream with cfg is refused for f
// and creates nothing.
func refusedStream(t *testing.T, v version, admin, js *jsapi.JS, cfg jsapi.StreamConfig, f jsapi.Feature) {
	t.Helper()
	cfg.Subjects, cfg.Storage = []string{cfg.Name + ".>"}, jsapi.StorageMemory
	out := outMsgs(js)
	_, err := js.CreateStream(testCtx(t), cfg)
	wantRefused(t, v, js, out, err, f)
	out = outMsgs(js)
	_, err = js.CreateOrUpdateStream(testCtx(t), cfg)
	wantRefused(t, v, js, out, err, f)
	wantNoStream(t, admin, cfg.Name)
}

// refusedConsumer checks that creating a consumer with cfg on a plain
// stream is refused for f and creates nothing.
func refusedConsumer(t *testing.T, v version, admin, js *jsapi.JS, cfg jsapi.ConsumerConfig, f jsapi.Feature) {
	t.Helper()
	mkStream(t, admin, jsapi.StreamConfig{Name: "PLAINC"})
	out := outMsgs(js)
	_, err := js.CreateConsumer(testCtx(t), "PLAINC", cfg)
	wantRefused(t, v, js, out, err, f)
	wantNoConsumer(t, admin, "PLAINC", cfg.Durable)
}

// refusedPublish checks that publishing with opts to a plain stream is
// refused for f and stores nothing.
func refusedPublish(t *testing.T, v version, admin, js *jsapi.JS, f jsapi.Feature, opts ...jsapi.PubOpt) {
	t.Helper()
	mkStream(t, admin, jsapi.StreamConfig{Name: "PLAIN"})
	out := outMsgs(js)
	_, err := js.Publish(testCtx(t), "PLAIN.x", nil, opts...)
	wantRefused(t, v, js, out, err, f)
	wantNoMsgs(t, admin, "PLAIN")
}

func runGated(t *testing.T, v version, s *server) {
	// One bound for all the checks below: a refusal takes no time, a hang
	// (what a 2.10–2.12 server does with a consumer reset) would take it all.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	hour := time.Now().Add(time.Hour)

	// 2.11
	gated(t, v, s, "per-message TTL (2.11)", 11, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "TTL", AllowMsgTTL: true, SubjectDeleteMarkerTTL: time.Minute})
		ack, err := js.Publish(ctx, "TTL.a", []byte("x"), jsapi.TTL(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		st, err := admin.Stream(ctx, "TTL")
		if err != nil {
			t.Fatal(err)
		}
		m, err := st.GetMsg(ctx, ack.Sequence)
		if err != nil || m.Header.Get(jsapi.HeaderTTL) != "3600" {
			t.Fatalf("stored %+v, %v; want Nats-TTL 3600", m, err)
		}
		if _, err := js.Publish(ctx, "TTL.a", nil, jsapi.TTL(0)); !errors.Is(err, jsapi.ErrInvalidTTL) {
			t.Fatalf("TTL 0: %v", err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		refusedStream(t, v, admin, js, jsapi.StreamConfig{Name: "TTL", AllowMsgTTL: true}, jsapi.FeatureMsgTTL)
		refusedStream(t, v, admin, js, jsapi.StreamConfig{Name: "TTL2", SubjectDeleteMarkerTTL: time.Minute}, jsapi.FeatureMsgTTL)
		refusedPublish(t, v, admin, js, jsapi.FeatureMsgTTL, jsapi.TTL(time.Hour))
	})
	gated(t, v, s, "KV per-key TTL (2.11)", 11, func(t *testing.T, admin, js *jsapi.JS) {
		b, err := kv.CreateBucket(ctx, js, kv.Config{Bucket: "ttl", LimitMarkerTTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kv.DeleteBucket(context.Background(), admin, "ttl") })
		if _, err := b.Create(ctx, "k", []byte("v"), kv.KeyTTL(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if e, err := b.Get(ctx, "k"); err != nil || string(e.Value) != "v" {
			t.Fatalf("get %+v, %v", e, err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		out := outMsgs(js)
		_, err := kv.CreateBucket(ctx, js, kv.Config{Bucket: "ttl", LimitMarkerTTL: time.Minute})
		if !errors.Is(err, kv.ErrLimitMarkerTTLNotSupported) {
			t.Fatalf("got %v, want ErrLimitMarkerTTLNotSupported", err)
		}
		wantRefused(t, v, js, out, err, jsapi.FeatureMsgTTL)
		wantNoStream(t, admin, "KV_ttl")
		if _, err := kv.CreateBucket(ctx, admin, kv.Config{Bucket: "plain"}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kv.DeleteBucket(context.Background(), admin, "plain") })
		b, err := kv.Bind(ctx, js, "plain")
		if err != nil {
			t.Fatal(err)
		}
		out = outMsgs(js)
		_, err = b.Create(ctx, "k", []byte("v"), kv.KeyTTL(time.Hour))
		wantRefused(t, v, js, out, err, jsapi.FeatureMsgTTL)
		wantNoMsgs(t, admin, "KV_plain")
	})
	gated(t, v, s, "expected last subject sequence for a filter (2.11)", 11, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "ELS"})
		if _, err := js.Publish(ctx, "ELS.a.1", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "ELS.b.1", nil); err != nil {
			t.Fatal(err)
		}
		// The last message on ELS.a.* is 1, though the stream's is 2.
		if _, err := js.Publish(ctx, "ELS.a.2", nil, jsapi.ExpectLastSubjectSeq(2), jsapi.ExpectLastSubjectSeqFor("ELS.a.*")); !errors.Is(err, jsapi.ErrWrongLastSequence) {
			t.Fatalf("wrong filter sequence: %v", err)
		}
		if _, err := js.Publish(ctx, "ELS.a.2", nil, jsapi.ExpectLastSubjectSeq(1), jsapi.ExpectLastSubjectSeqFor("ELS.a.*")); err != nil {
			t.Fatal(err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		refusedPublish(t, v, admin, js, jsapi.FeatureExpectLastSubjectSeqFor, jsapi.ExpectLastSubjectSeq(0), jsapi.ExpectLastSubjectSeqFor("PLAIN.*"))
	})
	gated(t, v, s, "priority groups (2.11)", 11, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "PRIO"})
		publishN(t, admin, "PRIO.x", 2)
		info, err := js.CreateConsumer(ctx, "PRIO", jsapi.ConsumerConfig{Durable: "over", PriorityPolicy: jsapi.PriorityOverflow, PriorityGroups: []string{"g"}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := pull.FromInfo(js, info)
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := c.Fetch(ctx, 2, pull.FetchGroup("g"))
		if err != nil || len(msgs) != 2 {
			t.Fatalf("fetch: %d, %v", len(msgs), err)
		}
		if _, err := js.CreateConsumer(ctx, "PRIO", jsapi.ConsumerConfig{Durable: "pin", PriorityPolicy: jsapi.PriorityPinnedClient, PriorityGroups: []string{"g"}, PriorityTimeout: time.Minute}); err != nil {
			t.Fatal(err)
		}
		if err := js.UnpinConsumer(ctx, "PRIO", "pin", "g"); err != nil {
			t.Fatal(err)
		}
		// A partitioned consumer group: created, joined, consumed.
		if _, err := pcgroup.CreateElastic(ctx, js, "PRIO", "cg", pcgroup.ElasticConfig{MaxMembers: 2, Members: []string{"m"},
			PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: "PRIO.*", PartitioningWildcards: []int{1}}}}); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 2)
		m, err := pcgroup.Join(ctx, js, pcgroup.Elastic, "PRIO", "cg", "m", func(_ context.Context, msg *jsapi.Msg) error {
			got <- msg.Subject
			return nil
		}, pcgroup.MemberConfig{})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { m.Stop(); <-m.Done() }()
		for range 2 {
			select {
			case s := <-got:
				if s != "PRIO.x" {
					t.Fatalf("group member got %q", s)
				}
			case <-ctx.Done():
				t.Fatal("group member got nothing")
			}
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		refusedConsumer(t, v, admin, js, jsapi.ConsumerConfig{Durable: "over", PriorityPolicy: jsapi.PriorityOverflow, PriorityGroups: []string{"g"}}, jsapi.FeaturePriorityGroups)
		refusedConsumer(t, v, admin, js, jsapi.ConsumerConfig{Durable: "pin", PriorityPolicy: jsapi.PriorityPinnedClient, PriorityGroups: []string{"g"}}, jsapi.FeaturePriorityGroups)
		if _, err := admin.CreateConsumer(ctx, "PLAINC", jsapi.ConsumerConfig{Durable: "plain"}); err != nil {
			t.Fatal(err)
		}
		out := outMsgs(js)
		err := js.UnpinConsumer(ctx, "PLAINC", "plain", "g")
		wantRefused(t, v, js, out, err, jsapi.FeaturePriorityGroups)
		// Partitioned consumer groups ride on pinned-client priority groups.
		out = outMsgs(js)
		_, err = pcgroup.CreateElastic(ctx, js, "PLAINC", "g", pcgroup.ElasticConfig{MaxMembers: 2})
		wantRefused(t, v, js, out, err, jsapi.FeaturePriorityGroups)
		_, err = pcgroup.Join(ctx, js, pcgroup.Elastic, "PLAINC", "g", "m", func(context.Context, *jsapi.Msg) error { return nil }, pcgroup.MemberConfig{})
		wantRefused(t, v, js, out, err, jsapi.FeaturePriorityGroups)
	})
	gated(t, v, s, "consumer pause (2.11)", 11, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "PAUSE"})
		if _, err := admin.CreateConsumer(ctx, "PAUSE", jsapi.ConsumerConfig{Durable: "d"}); err != nil {
			t.Fatal(err)
		}
		st, err := js.PauseConsumer(ctx, "PAUSE", "d", hour)
		if err != nil || !st.Paused {
			t.Fatalf("pause: %+v, %v", st, err)
		}
		if st, err = js.ResumeConsumer(ctx, "PAUSE", "d"); err != nil || st.Paused {
			t.Fatalf("resume: %+v, %v", st, err)
		}
		info, err := js.CreateConsumer(ctx, "PAUSE", jsapi.ConsumerConfig{Durable: "p", PauseUntil: hour})
		if err != nil || !info.Paused {
			t.Fatalf("create paused: %+v, %v", info, err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		refusedConsumer(t, v, admin, js, jsapi.ConsumerConfig{Durable: "p", PauseUntil: hour}, jsapi.FeatureConsumerPause)
		if _, err := admin.CreateConsumer(ctx, "PLAINC", jsapi.ConsumerConfig{Durable: "d"}); err != nil {
			t.Fatal(err)
		}
		out := outMsgs(js)
		_, err := js.PauseConsumer(ctx, "PLAINC", "d", hour)
		wantRefused(t, v, js, out, err, jsapi.FeatureConsumerPause)
	})
	gated(t, v, s, "batch direct get (2.11)", 11, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "BGET", AllowDirect: true})
		publishN(t, admin, "BGET.x", 5)
		n := 0
		for m, err := range extra.GetBatch(ctx, js, "BGET", 3, extra.StartSeq(2)) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; m.Sequence != uint64(n+1) {
				t.Fatalf("message %d has sequence %d", n, m.Sequence)
			}
		}
		if n != 3 {
			t.Fatalf("%d messages, want 3", n)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "BGET", AllowDirect: true})
		publishN(t, admin, "BGET.x", 5)
		out := outMsgs(js)
		var err error
		for _, e := range extra.GetBatch(ctx, js, "BGET", 3, extra.StartSeq(2)) {
			err = e
		}
		if !errors.Is(err, extra.ErrBatchUnsupported) {
			t.Fatalf("got %v, want ErrBatchUnsupported", err)
		}
		wantRefused(t, v, js, out, err, jsapi.FeatureBatchDirectGet)
	})

	// 2.12
	gated(t, v, s, "atomic batch publish (2.12)", 12, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "ATOM", AllowAtomicPublish: true})
		ack, err := extra.PublishBatch(ctx, js, []extra.BatchMsg{{Subject: "ATOM.a"}, {Subject: "ATOM.b"}, {Subject: "ATOM.c"}})
		if err != nil || ack.BatchSize != 3 || ack.Sequence != 3 {
			t.Fatalf("batch: %+v, %v", ack, err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		refusedStream(t, v, admin, js, jsapi.StreamConfig{Name: "ATOM", AllowAtomicPublish: true}, jsapi.FeatureAtomicBatch)
		mkStream(t, admin, jsapi.StreamConfig{Name: "PLAIN"})
		out := outMsgs(js)
		_, err := extra.PublishBatch(ctx, js, []extra.BatchMsg{{Subject: "PLAIN.a"}, {Subject: "PLAIN.b"}})
		wantRefused(t, v, js, out, err, jsapi.FeatureAtomicBatch)
		p, err := extra.NewBatchPublisher(js)
		if err != nil {
			t.Fatal(err)
		}
		err = p.Add(ctx, "PLAIN.a", nil)
		wantRefused(t, v, js, out, err, jsapi.FeatureAtomicBatch)
		wantNoMsgs(t, admin, "PLAIN")
	})
	gated(t, v, s, "counters (2.12)", 12, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "CNT", AllowMsgCounter: true})
		if _, err := js.Publish(ctx, "CNT.a", nil, jsapi.Incr(5)); err != nil {
			t.Fatal(err)
		}
		ack, err := js.Publish(ctx, "CNT.a", nil, jsapi.Incr(-2))
		if err != nil || ack.Value != "3" {
			t.Fatalf("counter: %+v, %v", ack, err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		refusedStream(t, v, admin, js, jsapi.StreamConfig{Name: "CNT", AllowMsgCounter: true}, jsapi.FeatureCounters)
		refusedPublish(t, v, admin, js, jsapi.FeatureCounters, jsapi.Incr(5))
	})
	gated(t, v, s, "@at schedules (2.12)", 12, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "SCH", AllowMsgSchedules: true})
		if _, err := js.Publish(ctx, "SCH.s", []byte("x"), jsapi.ScheduleAt(hour), jsapi.ScheduleTarget("SCH.t")); err != nil {
			t.Fatal(err)
		}
		st, err := admin.Stream(ctx, "SCH")
		if err != nil || st.CachedInfo().State.Msgs != 1 {
			t.Fatalf("stream %v, want the schedule stored", err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		refusedStream(t, v, admin, js, jsapi.StreamConfig{Name: "SCH", AllowMsgSchedules: true}, jsapi.FeatureSchedules)
		refusedPublish(t, v, admin, js, jsapi.FeatureSchedules, jsapi.ScheduleAt(hour), jsapi.ScheduleTarget("PLAIN.t"))
	})
	gated(t, v, s, "prioritized priority policy (2.12)", 12, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "PRI"})
		publishN(t, admin, "PRI.x", 2)
		info, err := js.CreateConsumer(ctx, "PRI", jsapi.ConsumerConfig{Durable: "p", PriorityPolicy: jsapi.PriorityPrioritized, PriorityGroups: []string{"g"}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := pull.FromInfo(js, info)
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := c.Fetch(ctx, 2, pull.FetchGroup("g"), pull.FetchPriority(1))
		if err != nil || len(msgs) != 2 {
			t.Fatalf("fetch: %d, %v", len(msgs), err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		refusedConsumer(t, v, admin, js, jsapi.ConsumerConfig{Durable: "p", PriorityPolicy: jsapi.PriorityPrioritized, PriorityGroups: []string{"g"}}, jsapi.FeaturePrioritizedPolicy)
	})
	gated(t, v, s, "async persist mode (2.12)", 12, func(t *testing.T, admin, js *jsapi.JS) {
		st := mkStream(t, js, jsapi.StreamConfig{Name: "ASYNC", Storage: jsapi.StorageFile, PersistMode: jsapi.PersistAsync})
		if got := st.CachedInfo().Config.PersistMode; got != jsapi.PersistAsync {
			t.Fatalf("persist mode %q", got)
		}
		publishN(t, js, "ASYNC.x", 3)
	}, func(t *testing.T, admin, js *jsapi.JS) {
		refusedStream(t, v, admin, js, jsapi.StreamConfig{Name: "ASYNC", PersistMode: jsapi.PersistAsync}, jsapi.FeatureAsyncPersist)
	})

	// 2.14
	gated(t, v, s, "fast batch publish (2.14)", 14, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "FAST", AllowBatchPublish: true})
		p, err := extra.NewFastPublisher(js)
		if err != nil {
			t.Fatal(err)
		}
		for _, subj := range []string{"FAST.a", "FAST.b"} {
			if _, err := p.Add(ctx, subj, nil); err != nil {
				t.Fatal(err)
			}
		}
		ack, err := p.Commit(ctx, "FAST.c", nil)
		if err != nil || ack.BatchSize != 3 {
			t.Fatalf("commit: %+v, %v", ack, err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		refusedStream(t, v, admin, js, jsapi.StreamConfig{Name: "FAST", AllowBatchPublish: true}, jsapi.FeatureFastBatch)
		mkStream(t, admin, jsapi.StreamConfig{Name: "PLAIN"})
		p, err := extra.NewFastPublisher(js)
		if err != nil {
			t.Fatal(err)
		}
		out := outMsgs(js)
		_, err = p.Add(ctx, "PLAIN.a", nil)
		wantRefused(t, v, js, out, err, jsapi.FeatureFastBatch)
		_, err = p.Commit(ctx, "PLAIN.a", nil)
		wantRefused(t, v, js, out, err, jsapi.FeatureFastBatch)
		wantNoMsgs(t, admin, "PLAIN")
	})
	gated(t, v, s, "batch commit by end-of-batch marker (2.14)", 14, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "EOB", AllowAtomicPublish: true})
		p, err := extra.NewBatchPublisher(js)
		if err != nil {
			t.Fatal(err)
		}
		for _, subj := range []string{"EOB.a", "EOB.b"} {
			if err := p.Add(ctx, subj, nil); err != nil {
				t.Fatal(err)
			}
		}
		ack, err := p.CommitEOB(ctx)
		if err != nil || ack.BatchSize != 2 || ack.Sequence != 2 {
			t.Fatalf("commit: %+v, %v", ack, err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		if !v.has(12) {
			// No atomic batches at all: the first message is refused.
			mkStream(t, admin, jsapi.StreamConfig{Name: "PLAIN"})
			p, err := extra.NewBatchPublisher(js)
			if err != nil {
				t.Fatal(err)
			}
			out := outMsgs(js)
			err = p.Add(ctx, "PLAIN.a", nil)
			wantRefused(t, v, js, out, err, jsapi.FeatureAtomicBatch)
			wantNoMsgs(t, admin, "PLAIN")
			return
		}
		// 2.12 has atomic batches, not the end-of-batch commit.
		mkStream(t, admin, jsapi.StreamConfig{Name: "EOB", AllowAtomicPublish: true})
		p, err := extra.NewBatchPublisher(js)
		if err != nil {
			t.Fatal(err)
		}
		for _, subj := range []string{"EOB.a", "EOB.b"} {
			if err := p.Add(ctx, subj, nil); err != nil {
				t.Fatal(err)
			}
		}
		out := outMsgs(js)
		_, err = p.CommitEOB(ctx)
		wantRefused(t, v, js, out, err, jsapi.FeatureBatchCommitEOB)
		if p.IsClosed() {
			t.Fatal("the refusal closed the publisher")
		}
		p.Discard()
		wantNoMsgs(t, admin, "EOB")
	})
	scheduleRow := func(row string, f jsapi.Feature, opt jsapi.PubOpt) {
		gated(t, v, s, row, 14, func(t *testing.T, admin, js *jsapi.JS) {
			mkStream(t, admin, jsapi.StreamConfig{Name: "SCH", AllowMsgSchedules: true})
			if _, err := js.Publish(ctx, "SCH.s", []byte("x"), opt, jsapi.ScheduleTarget("SCH.t")); err != nil {
				t.Fatal(err)
			}
			st, err := admin.Stream(ctx, "SCH")
			if err != nil || st.CachedInfo().State.Msgs != 1 {
				t.Fatalf("stream %v, want the schedule stored", err)
			}
		}, func(t *testing.T, admin, js *jsapi.JS) {
			if v.has(12) {
				// A stream that takes @at schedules, not this kind.
				mkStream(t, admin, jsapi.StreamConfig{Name: "SCH", AllowMsgSchedules: true})
				out := outMsgs(js)
				_, err := js.Publish(ctx, "SCH.s", []byte("x"), opt, jsapi.ScheduleTarget("SCH.t"))
				wantRefused(t, v, js, out, err, f)
				wantNoMsgs(t, admin, "SCH")
				return
			}
			refusedPublish(t, v, admin, js, f, opt, jsapi.ScheduleTarget("PLAIN.t"))
		})
	}
	scheduleRow("cron schedules (2.14)", jsapi.FeatureScheduleCron, jsapi.ScheduleCron("0 0 0 1 1 *"))
	scheduleRow("interval schedules (2.14)", jsapi.FeatureScheduleInterval, jsapi.ScheduleEvery(time.Hour))
	gated(t, v, s, "consumer reset (2.14)", 14, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "RST"})
		publishN(t, admin, "RST.x", 3)
		info, err := admin.CreateConsumer(ctx, "RST", jsapi.ConsumerConfig{Durable: "d"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := pull.FromInfo(admin, info)
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := c.Fetch(ctx, 3)
		if err != nil || len(msgs) != 3 {
			t.Fatalf("fetch %d, %v", len(msgs), err)
		}
		for _, m := range msgs {
			if err := m.AckSync(ctx); err != nil {
				t.Fatal(err)
			}
		}
		_, seq, err := js.ResetConsumer(ctx, "RST", "d", 2)
		if err != nil || seq != 2 {
			t.Fatalf("reset: %d, %v", seq, err)
		}
		m, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if md, err := m.Metadata(); err != nil || md.StreamSeq != 2 {
			t.Fatalf("after reset: %+v, %v", md, err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "RST"})
		if _, err := admin.CreateConsumer(ctx, "RST", jsapi.ConsumerConfig{Durable: "d"}); err != nil {
			t.Fatal(err)
		}
		out := outMsgs(js)
		_, _, err := js.ResetConsumer(ctx, "RST", "d", 1)
		wantRefused(t, v, js, out, err, jsapi.FeatureConsumerReset)
	})
	// A flow_control consumer is a push consumer with flow control and a
	// one-second heartbeat (what stream sourcing uses).
	fcConfig := jsapi.ConsumerConfig{Durable: "fc", AckPolicy: jsapi.AckFlowControl, DeliverSubject: "fc.deliver",
		FlowControl: true, IdleHeartbeat: time.Second, MaxAckPending: 100}
	gated(t, v, s, "flow_control ack policy (2.14)", 14, func(t *testing.T, admin, js *jsapi.JS) {
		mkStream(t, admin, jsapi.StreamConfig{Name: "FC"})
		info, err := js.CreateConsumer(ctx, "FC", fcConfig)
		if err != nil || info.Config.AckPolicy != jsapi.AckFlowControl {
			t.Fatalf("create: %+v, %v", info, err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		refusedConsumer(t, v, admin, js, fcConfig, jsapi.FeatureFlowControlAck)
	})

	// 2.15
	gated(t, v, s, "API level 5 (2.15)", 15, func(t *testing.T, admin, js *jsapi.JS) {
		if err := js.Check(ctx, jsapi.FeatureAPILevel5); err != nil {
			t.Fatal(err)
		}
	}, func(t *testing.T, admin, js *jsapi.JS) {
		out := outMsgs(js)
		err := js.Check(ctx, jsapi.FeatureAPILevel5)
		wantRefused(t, v, js, out, err, jsapi.FeatureAPILevel5)
	})

	// Behind a domain the connected server's INFO does not describe the
	// JetStream server: the level comes from $JS.<domain>.API.INFO.
	t.Run("domain", func(t *testing.T) {
		const row = "feature check behind a JetStream domain ($JS.API.INFO level)"
		admin := newJS(t, s)
		js := newJS(t, s, jsapi.Domain(domain))
		cfg := jsapi.StreamConfig{Name: "DTTL", Subjects: []string{"DTTL.>"}, Storage: jsapi.StorageMemory, AllowMsgTTL: true}
		if v.has(11) {
			record(t, v, row, cellWorks)
			if _, err := js.CreateStream(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = admin.DeleteStream(context.Background(), "DTTL") })
			if _, err := js.Publish(ctx, "DTTL.a", nil, jsapi.TTL(time.Hour)); err != nil {
				t.Fatal(err)
			}
			return
		}
		record(t, v, row, cellRefused)
		_, err := js.CreateStream(ctx, cfg)
		var fe *jsapi.FeatureError
		if !errors.As(err, &fe) || fe.Feature != jsapi.FeatureMsgTTL || fe.ServerAPILevel != 0 || fe.ServerVersion != "" || fe.Err != nil {
			t.Fatalf("got %v (%+v), want a FeatureError for the TTL at level 0 of an unnamed server", err, fe)
		}
		wantNoStream(t, admin, "DTTL")
		mkStream(t, admin, jsapi.StreamConfig{Name: "PLAIN"})
		out := outMsgs(js)
		_, err = js.Publish(ctx, "PLAIN.a", nil, jsapi.TTL(time.Hour))
		if !errors.As(err, &fe) || fe.Feature != jsapi.FeatureMsgTTL {
			t.Fatalf("got %v, want a FeatureError", err)
		}
		if outMsgs(js) != out {
			t.Fatal("the publish was sent")
		}
		wantNoMsgs(t, admin, "PLAIN")
	})
}
