package jsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// mustCreateStream creates a memory stream, failing the test on error.
func mustCreateStream(t testing.TB, js *jsapi.JS, cfg jsapi.StreamConfig) *jsapi.Stream {
	t.Helper()
	if cfg.Storage == "" {
		cfg.Storage = jsapi.StorageMemory
	}
	st, err := js.CreateStream(ctxT(t), cfg)
	if err != nil {
		t.Fatalf("create stream %s: %v", cfg.Name, err)
	}
	return st
}

// mustStore publishes to a stream subject and waits for the PubAck,
// returning the stored sequence.
func mustStore(t testing.TB, nc *conn.Conn, subject, data string, hdr ...string) uint64 {
	t.Helper()
	var h *proto.Header
	if len(hdr) > 0 {
		h = &proto.Header{}
		for i := 0; i+1 < len(hdr); i += 2 {
			h.Add(hdr[i], hdr[i+1])
		}
	}
	m, err := nc.RequestMsg(ctxT(t), subject, h, []byte(data))
	if err != nil {
		t.Fatalf("publish %s: %v", subject, err)
	}
	var ack struct {
		Seq   uint64          `json:"seq"`
		Error *jsapi.APIError `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &ack); err != nil || ack.Error != nil || ack.Seq == 0 {
		t.Fatalf("publish %s: %s (%v)", subject, m.Data, err)
	}
	return ack.Seq
}

// streamMsgs returns a stream's message count (fresh info).
func streamMsgs(t testing.TB, st *jsapi.Stream) uint64 {
	t.Helper()
	info, err := st.Info(ctxT(t))
	if err != nil {
		t.Fatalf("info %s: %v", st.Name(), err)
	}
	return info.State.Msgs
}

func TestCreateStream(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	cfg := jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Storage: jsapi.StorageMemory}
	st, err := js.CreateStream(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Name() != "ORDERS" {
		t.Fatalf("name %q", st.Name())
	}
	info := st.CachedInfo()
	if info == nil || info.Config.Storage != jsapi.StorageMemory || info.Config.Retention != jsapi.RetentionLimits ||
		info.Config.Discard != jsapi.DiscardOld || info.Config.Replicas != 1 || info.Config.MaxMsgs != -1 ||
		info.Config.DuplicateWindow != 2*time.Minute || info.Created.IsZero() {
		t.Fatalf("server defaults not reported: %+v", info)
	}

	// Identical re-create: idempotent.
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatalf("identical re-create: %v", err)
	}
	// The configuration as read back (server defaults, _nats metadata) is
	// the same configuration too.
	if _, err := js.CreateStream(ctx, info.Config); err != nil {
		t.Fatalf("re-create with the config read back: %v", err)
	}
	// Different configuration: name in use.
	diff := cfg
	diff.MaxMsgs = 10
	_, err = js.CreateStream(ctx, diff)
	if !errors.Is(err, jsapi.ErrStreamNameInUse) {
		t.Fatalf("different config: %v, want ErrStreamNameInUse", err)
	}
	var ae *jsapi.APIError
	if !errors.As(err, &ae) || ae.ErrorCode != 10058 {
		t.Fatalf("want APIError 10058, got %#v", err)
	}
	// Overlapping subjects.
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "OTHER", Subjects: []string{"orders.new"}, Storage: jsapi.StorageMemory}); !errors.Is(err, jsapi.ErrSubjectOverlap) {
		t.Fatalf("overlap: %v", err)
	}

	// Invalid names fail before any I/O: a closed connection is not
	// touched.
	nc2 := connect(t, nc.ConnectedURL())
	js2 := newJS(t, nc2)
	nc2.Close()
	for _, name := range []string{"", "a.b", "a b", "a*", "a>", "a/b", `a\b`, strings.Repeat("x", 256)} {
		if _, err := js2.CreateStream(ctx, jsapi.StreamConfig{Name: name}); !errors.Is(err, jsapi.ErrInvalidName) {
			t.Fatalf("CreateStream(%q): %v, want ErrInvalidName", name, err)
		}
		if _, err := js2.Stream(ctx, name); !errors.Is(err, jsapi.ErrInvalidName) {
			t.Fatalf("Stream(%q): %v, want ErrInvalidName", name, err)
		}
	}
	if _, err := js2.CreateStream(ctx, jsapi.StreamConfig{Name: "OK"}); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("valid name on closed conn: %v", err)
	}
}

func TestCreateOrUpdateStream(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)

	// Missing: created.
	cfg := jsapi.StreamConfig{Name: "COU", Subjects: []string{"cou.>"}, Storage: jsapi.StorageMemory}
	st, err := js.CreateOrUpdateStream(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.CachedInfo().Config.MaxMsgs != -1 {
		t.Fatalf("created: %+v", st.CachedInfo().Config)
	}
	// Existing: updated.
	cfg.MaxMsgs = 5
	cfg.Description = "updated"
	st, err = js.CreateOrUpdateStream(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c := st.CachedInfo().Config; c.MaxMsgs != 5 || c.Description != "updated" {
		t.Fatalf("not updated: %+v", c)
	}
	info, err := st.Info(ctx)
	if err != nil || info.Config.MaxMsgs != 5 {
		t.Fatalf("info after update: %+v %v", info, err)
	}

	// Concurrent creators, same and different configurations: all
	// succeed, none sees name-in-use.
	for _, differ := range []bool{false, true} {
		name := fmt.Sprintf("RACE_%v", differ)
		var wg sync.WaitGroup
		errs := make(chan error, 10)
		for i := range 10 {
			wg.Go(func() {
				c := jsapi.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}, Storage: jsapi.StorageMemory}
				if differ {
					c.Description = fmt.Sprint("creator ", i)
				}
				if _, err := js.CreateOrUpdateStream(ctx, c); err != nil {
					errs <- fmt.Errorf("creator %d: %w", i, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if _, err := js.Stream(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUpdateStream(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	if _, err := js.UpdateStream(ctx, jsapi.StreamConfig{Name: "NOPE", Storage: jsapi.StorageMemory}); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("update missing: %v", err)
	}
	st := mustCreateStream(t, js, jsapi.StreamConfig{Name: "UPD", Subjects: []string{"upd.a"}})
	// Read-modify-write of the configuration read back.
	cfg := st.CachedInfo().Config
	cfg.Subjects = append(cfg.Subjects, "upd.b")
	cfg.AllowDirect = true
	cfg.Metadata = map[string]string{"owner": "test"}
	st2, err := js.UpdateStream(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := st2.CachedInfo().Config
	if len(got.Subjects) != 2 || !got.AllowDirect || got.Metadata["owner"] != "test" {
		t.Fatalf("update not applied: %+v", got)
	}
	mustStore(t, nc, "upd.b", "x")
	// Setting a boolean back to false is an update too.
	got.AllowDirect = false
	st3, err := js.UpdateStream(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	if st3.CachedInfo().Config.AllowDirect {
		t.Fatal("allow_direct not reset to false")
	}
	// A change the server refuses.
	bad := st3.CachedInfo().Config
	bad.Storage = jsapi.StorageFile
	var ae *jsapi.APIError
	if _, err := js.UpdateStream(ctx, bad); !errors.As(err, &ae) || ae.Code != 500 && ae.Code != 400 {
		t.Fatalf("storage change: %v", err)
	}
}

func TestStreamDelete(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)
	if _, err := js.Stream(ctx, "MISSING"); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("Stream(missing): %v", err)
	}
	st := mustCreateStream(t, js, jsapi.StreamConfig{Name: "DEL"})
	got, err := js.Stream(ctx, "DEL")
	if err != nil || got.Name() != "DEL" || got.CachedInfo().Config.Subjects[0] != "DEL" {
		t.Fatalf("Stream: %v %+v", err, got)
	}
	if err := js.DeleteStream(ctx, "DEL"); err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(ctx, "DEL"); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	if _, err := st.Info(ctx); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("info of deleted: %v", err)
	}
	if st.CachedInfo() == nil {
		t.Fatal("cached info lost")
	}
}

// TestStreamListPaging lists more streams than one page of names (1024)
// and of infos (256): every stream exactly once, in name order.
func TestStreamListPaging(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxTimeout(t, 2*time.Minute)
	// Sequential creation is the fastest: concurrent API requests contend
	// in the server.
	const n = 1030
	for i := range n {
		cfg := jsapi.StreamConfig{Name: fmt.Sprintf("P%04d", i), Subjects: []string{fmt.Sprintf("page.%d.%04d", i%2, i)}, Storage: jsapi.StorageMemory}
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}

	check := func(what string, names []string, want int) {
		t.Helper()
		if len(names) != want {
			t.Fatalf("%s: %d names, want %d", what, len(names), want)
		}
		seen := map[string]bool{}
		for i, name := range names {
			if seen[name] {
				t.Fatalf("%s: %s twice", what, name)
			}
			seen[name] = true
			if i > 0 && names[i-1] >= name {
				t.Fatalf("%s: not in order at %d: %s %s", what, i, names[i-1], name)
			}
		}
	}
	var names []string
	for name, err := range js.StreamNames(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	check("StreamNames", names, n)

	names = names[:0]
	for info, err := range js.Streams(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, info.Config.Name)
	}
	check("Streams", names, n)

	// Filtered by subject: half of them (one page of infos and a bit).
	names = names[:0]
	for info, err := range js.Streams(ctx, "page.1.*") {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, info.Config.Name)
	}
	check("Streams(page.1.*)", names, n/2)
	names = names[:0]
	for name, err := range js.StreamNames(ctx, "page.0.>") {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	check("StreamNames(page.0.>)", names, n/2)

	// Breaking out of the loop stops paging.
	count := 0
	for _, err := range js.StreamNames(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		if count++; count == 3 {
			break
		}
	}
	// An error is yielded once, as the last pair.
	nc.Close()
	count = 0
	for name, err := range js.StreamNames(ctx, "") {
		count++
		if err == nil || name != "" {
			t.Fatalf("closed conn: %q %v", name, err)
		}
	}
	if count != 1 {
		t.Fatalf("error yielded %d times", count)
	}
}

func TestStreamNameBySubject(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)
	mustCreateStream(t, js, jsapi.StreamConfig{Name: "A", Subjects: []string{"a.>"}})
	mustCreateStream(t, js, jsapi.StreamConfig{Name: "B", Subjects: []string{"b.*"}})
	for subj, want := range map[string]string{"a.x.y": "A", "b.x": "B", "a.*": "A", "b.>": "B"} {
		got, err := js.StreamNameBySubject(ctx, subj)
		if err != nil || got != want {
			t.Fatalf("StreamNameBySubject(%s) = %q, %v; want %s", subj, got, err, want)
		}
	}
	if _, err := js.StreamNameBySubject(ctx, "c.x"); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("no stream: %v", err)
	}
	if _, err := js.StreamNameBySubject(ctx, ""); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("empty subject: %v", err)
	}
}

// TestStreamInfoSubjectsPaged asks for the subjects of a stream with more
// subjects than the server sends in one reply (100,000).
func TestStreamInfoSubjectsPaged(t *testing.T) {
	// A page of 100,000 subjects is larger than the default max_payload;
	// the client's parser limit follows the server's max_payload.
	s := natstest.NewServer(t, natstest.MaxPayload(8<<20))
	nc := connect(t, s.URL())
	js := newJS(t, nc)
	ctx := ctxTimeout(t, 2*time.Minute)
	st := mustCreateStream(t, js, jsapi.StreamConfig{Name: "SUBJ", Subjects: []string{"s.>"}})
	const n = 100_000 + 50
	for i := range n {
		if err := nc.Publish(fmt.Sprintf("s.%06d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, time.Minute, "all messages stored", func() bool { return streamMsgs(t, st) == n })

	info, err := st.Info(ctx, jsapi.SubjectsFilter(">"))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.State.Subjects) != n || info.State.NumSubjects != n {
		t.Fatalf("%d subjects (num_subjects %d), want %d", len(info.State.Subjects), info.State.NumSubjects, n)
	}
	for _, subj := range []string{"s.000000", "s.050000", "s.099999", "s.100000", fmt.Sprintf("s.%06d", n-1)} {
		if info.State.Subjects[subj] != 1 {
			t.Fatalf("subject %s: %d", subj, info.State.Subjects[subj])
		}
	}
	// A filter matching one subject: one page.
	info, err = st.Info(ctx, jsapi.SubjectsFilter("s.100049"))
	if err != nil || len(info.State.Subjects) != 1 {
		t.Fatalf("literal filter: %v %v", info.State.Subjects, err)
	}
	// The cached info has the subjects of the last Info call.
	if st.CachedInfo() != info {
		t.Fatal("cached info not updated")
	}
}

func TestStreamInfoDeletedDetails(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	st := mustCreateStream(t, js, jsapi.StreamConfig{Name: "DD", Subjects: []string{"dd.*"}})
	for i := range 5 {
		mustStore(t, nc, fmt.Sprintf("dd.%d", i%2), "x")
	}
	if err := st.DeleteMsg(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := st.SecureDeleteMsg(ctx, 4); err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jsapi.DeletedDetails(), jsapi.SubjectsFilter("dd.*"))
	if err != nil {
		t.Fatal(err)
	}
	if info.State.NumDeleted != 2 || len(info.State.Deleted) != 2 || info.State.Deleted[0] != 2 || info.State.Deleted[1] != 4 {
		t.Fatalf("deleted: %d %v", info.State.NumDeleted, info.State.Deleted)
	}
	if info.State.Subjects["dd.0"] != 3 || len(info.State.Subjects) != 1 {
		t.Fatalf("subjects: %v", info.State.Subjects)
	}
	if info.State.Msgs != 3 || info.State.FirstSeq != 1 || info.State.LastSeq != 5 {
		t.Fatalf("state: %+v", info.State)
	}
}

func TestStreamPurge(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	st := mustCreateStream(t, js, jsapi.StreamConfig{Name: "PURGE", Subjects: []string{"pg.*"}})
	for i := range 10 {
		mustStore(t, nc, fmt.Sprintf("pg.%c", 'a'+i%2), "x") // a: 1,3,5,7,9  b: 2,4,6,8,10
	}
	n, err := st.Purge(ctx, jsapi.PurgeSubject("pg.a"), jsapi.PurgeKeep(2))
	if err != nil || n != 3 {
		t.Fatalf("purge a keep 2: %d %v", n, err)
	}
	n, err = st.Purge(ctx, jsapi.PurgeSequence(6))
	if err != nil || n != 2 { // 2 and 4 (1, 3, 5 are gone)
		t.Fatalf("purge below 6: %d %v", n, err)
	}
	n, err = st.Purge(ctx, jsapi.PurgeSubject("pg.b"))
	if err != nil || n != 3 { // 6, 8, 10
		t.Fatalf("purge b: %d %v", n, err)
	}
	if got := streamMsgs(t, st); got != 2 {
		t.Fatalf("left %d", got)
	}
	n, err = st.Purge(ctx)
	if err != nil || n != 2 {
		t.Fatalf("purge all: %d %v", n, err)
	}
	if _, err := st.Purge(ctx, jsapi.PurgeKeep(1), jsapi.PurgeSequence(3)); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("keep+seq: %v", err)
	}
	deny := mustCreateStream(t, js, jsapi.StreamConfig{Name: "NOPURGE", DenyPurge: true})
	var ae *jsapi.APIError
	if _, err := deny.Purge(ctx); !errors.As(err, &ae) {
		t.Fatalf("deny purge: %v", err)
	}
}

func TestStreamMirrorAndSources(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	mustCreateStream(t, js, jsapi.StreamConfig{Name: "SRC1", Subjects: []string{"src1.>"}})
	mustCreateStream(t, js, jsapi.StreamConfig{Name: "SRC2", Subjects: []string{"src2.>"}})
	for i := range 3 {
		mustStore(t, nc, "src1.x", fmt.Sprint(i))
		mustStore(t, nc, "src2.y", fmt.Sprint(i))
	}
	mirror := mustCreateStream(t, js, jsapi.StreamConfig{Name: "MIRROR", Mirror: &jsapi.StreamSource{Name: "SRC1"}})
	agg := mustCreateStream(t, js, jsapi.StreamConfig{Name: "AGG", Sources: []jsapi.StreamSource{
		{Name: "SRC1"},
		{Name: "SRC2", FilterSubject: "src2.y", SubjectTransforms: nil},
	}})
	if c := mirror.CachedInfo().Config; c.Mirror == nil || c.Mirror.Name != "SRC1" || len(c.Subjects) != 0 {
		t.Fatalf("mirror config: %+v", c)
	}
	if c := agg.CachedInfo().Config; len(c.Sources) != 2 || c.Sources[1].FilterSubject != "src2.y" {
		t.Fatalf("sources config: %+v", c)
	}
	eventually(t, "mirror copies", func() bool { return streamMsgs(t, mirror) == 3 })
	eventually(t, "sources copy", func() bool { return streamMsgs(t, agg) == 6 })
	mustStore(t, nc, "src1.z", "more")
	eventually(t, "mirror follows", func() bool { return streamMsgs(t, mirror) == 4 })
	info, err := mirror.Info(ctx)
	if err != nil || info.Mirror == nil || info.Mirror.Name != "SRC1" {
		t.Fatalf("mirror info: %+v %v", info, err)
	}
	info, err = agg.Info(ctx)
	if err != nil || len(info.Sources) != 2 {
		t.Fatalf("sources info: %+v %v", info, err)
	}
	m, err := mirror.GetMsg(ctx, 4)
	if err != nil || m.Subject != "src1.z" || string(m.Data) != "more" {
		t.Fatalf("mirror msg: %+v %v", m, err)
	}
}

func TestStreamSubjectTransform(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	st := mustCreateStream(t, js, jsapi.StreamConfig{
		Name:             "TR",
		Subjects:         []string{"in.>"},
		SubjectTransform: &jsapi.SubjectTransformConfig{Source: "in.*.*", Destination: "out.{{wildcard(2)}}.{{wildcard(1)}}"},
	})
	if tr := st.CachedInfo().Config.SubjectTransform; tr == nil || tr.Destination != "out.{{wildcard(2)}}.{{wildcard(1)}}" {
		t.Fatalf("transform config: %+v", tr)
	}
	mustStore(t, nc, "in.a.b", "x")
	m, err := st.GetLastMsgForSubject(ctx, "out.b.a")
	if err != nil || m.Subject != "out.b.a" {
		t.Fatalf("transformed: %+v %v", m, err)
	}
}

func TestStreamRePublish(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	sub, err := nc.Subscribe("repub.>")
	if err != nil {
		t.Fatal(err)
	}
	st := mustCreateStream(t, js, jsapi.StreamConfig{
		Name:      "RP",
		Subjects:  []string{"rp.>"},
		RePublish: &jsapi.RePublish{Source: "rp.>", Destination: "repub.>", HeadersOnly: true},
	})
	if rp := st.CachedInfo().Config.RePublish; rp == nil || rp.Destination != "repub.>" || !rp.HeadersOnly {
		t.Fatalf("republish config: %+v", rp)
	}
	mustStore(t, nc, "rp.one", "payload")
	m, err := sub.NextMsg(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "repub.one" || len(m.Data) != 0 || m.Header.Get("Nats-Stream") != "RP" ||
		m.Header.Get("Nats-Sequence") != "1" || m.Header.Get("Nats-Msg-Size") != "7" {
		t.Fatalf("republished: %s %q %q", m.Subject, m.Header, m.Data)
	}
}

func TestStreamTTLConfig(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	// A marker TTL below one second is refused.
	var ae *jsapi.APIError
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "BADTTL", SubjectDeleteMarkerTTL: time.Second / 2, Storage: jsapi.StorageMemory}); !errors.As(err, &ae) || ae.ErrorCode != 10052 {
		t.Fatalf("marker TTL 0.5s: %v", err)
	}
	// A marker TTL turns on per-message TTLs and rollups.
	st := mustCreateStream(t, js, jsapi.StreamConfig{Name: "TTL", Subjects: []string{"ttl.>"}, SubjectDeleteMarkerTTL: time.Second})
	c := st.CachedInfo().Config
	if !c.AllowMsgTTL || c.SubjectDeleteMarkerTTL != time.Second || !c.AllowRollup {
		t.Fatalf("TTL config: %+v", c)
	}
	// Watch the stream through a push consumer, to see the marker when it
	// is stored (it expires itself a second later).
	sub, err := nc.Subscribe("deliver.ttl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateConsumer(ctx, "TTL", jsapi.ConsumerConfig{Name: "watch", DeliverSubject: "deliver.ttl", AckPolicy: jsapi.AckNone}); err != nil {
		t.Fatal(err)
	}
	mustStore(t, nc, "ttl.b", "forever", "Nats-TTL", "never")
	mustStore(t, nc, "ttl.a", "short", "Nats-TTL", "1s")
	want := []string{"ttl.b forever", "ttl.a short", "ttl.a marker MaxAge"}
	for i, w := range want {
		m, err := sub.NextMsg(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := m.Subject + " " + string(m.Data)
		if r := m.Header.Get("Nats-Marker-Reason"); r != "" {
			got = m.Subject + " marker " + r
		}
		if got != w {
			t.Fatalf("delivery %d: %q, want %q", i, got, w)
		}
	}
	if _, err := st.GetMsg(ctx, 2); !errors.Is(err, jsapi.ErrMsgNotFound) {
		t.Fatalf("expired message: %v", err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "ttl.b")
	if err != nil || string(m.Data) != "forever" || m.Header.Get("Nats-TTL") != "never" {
		t.Fatalf("kept: %+v %v", m, err)
	}
}

// TestDomain reaches JetStream through its domain prefix ($JS.hub.API.).
func TestDomain(t *testing.T) {
	s := natstest.NewServer(t, natstest.Configure(func(o *server.Options) { o.JetStreamDomain = "hub" }))
	nc := connect(t, s.URL())
	js := newJS(t, nc, jsapi.Domain("hub"))
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "DOM", Subjects: []string{"dom.>"}, Storage: jsapi.StorageMemory, AllowDirect: true})
	if err != nil {
		t.Fatal(err)
	}
	mustStore(t, nc, "dom.a", "hello")
	got, err := js.Stream(ctx, "DOM")
	if err != nil || got.CachedInfo().State.Msgs != 1 || got.CachedInfo().Domain != "hub" {
		t.Fatalf("info via domain: %+v %v", got, err)
	}
	m, err := st.GetMsg(ctx, 1)
	if err != nil || string(m.Data) != "hello" {
		t.Fatalf("direct get via domain: %+v %v", m, err)
	}
	if _, err := js.CreateConsumer(ctx, "DOM", jsapi.ConsumerConfig{Durable: "D", AckPolicy: jsapi.AckExplicit}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n, err := range js.StreamNames(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if len(names) != 1 || names[0] != "DOM" {
		t.Fatalf("names via domain: %v", names)
	}
	// Another domain: nobody answers.
	other := newJS(t, nc, jsapi.Domain("elsewhere"))
	if _, err := other.Stream(ctx, "DOM"); !errors.Is(err, jsapi.ErrNotEnabled) {
		t.Fatalf("unknown domain: %v", err)
	}
}

func TestStreamConfigUnknownFields(t *testing.T) {
	in := `{"name":"X","subjects":["x.>"],"retention":"workqueue","max_age":1000000000,` +
		`"storage":"memory","future_field":{"a":[1,2,3]},"zeta":true,"allow_direct":true,` +
		`"consumer_limits":{"max_ack_pending":5},"compression":"s2","persist_mode":"async"}`
	var cfg jsapi.StreamConfig
	if err := json.Unmarshal([]byte(in), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "X" || cfg.Retention != jsapi.RetentionWorkQueue || cfg.MaxAge != time.Second ||
		cfg.Storage != jsapi.StorageMemory || !cfg.AllowDirect || cfg.ConsumerLimits.MaxAckPending != 5 ||
		cfg.Compression != jsapi.CompressionS2 || cfg.PersistMode != jsapi.PersistAsync {
		t.Fatalf("decoded: %+v", cfg)
	}
	// Modify and write back: the unknown members survive.
	cfg.Description = "changed"
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if string(m["future_field"]) != `{"a":[1,2,3]}` || string(m["zeta"]) != "true" || string(m["description"]) != `"changed"` {
		t.Fatalf("round trip lost members: %s", out)
	}
	// Through a pointer and nested in StreamInfo as well.
	out2, err := json.Marshal(&cfg)
	if err != nil || string(out2) != string(out) {
		t.Fatalf("pointer marshal: %s %v", out2, err)
	}
	var info jsapi.StreamInfo
	if err := json.Unmarshal([]byte(`{"config":`+in+`,"state":{"messages":3}}`), &info); err != nil {
		t.Fatal(err)
	}
	out3, _ := json.Marshal(info.Config)
	if !strings.Contains(string(out3), `"future_field":{"a":[1,2,3]}`) || info.State.Msgs != 3 {
		t.Fatalf("nested: %s", out3)
	}

	// A zero configuration sends only what is set.
	out, err = json.Marshal(jsapi.StreamConfig{Name: "Z"})
	if err != nil || string(out) != `{"name":"Z"}` {
		t.Fatalf("zero config: %s %v", out, err)
	}
	out, _ = json.Marshal(jsapi.StreamConfig{Name: "Z", MaxAge: time.Hour, Storage: jsapi.StorageFile, DenyDelete: true})
	if string(out) != `{"name":"Z","max_age":3600000000000,"storage":"file","deny_delete":true}` {
		t.Fatalf("config: %s", out)
	}
}

// TestStreamConfigUnknownFieldsServer shows that members the client does
// not model reach the server: "pedantic" (a request member, not part of
// StreamConfig) makes the server refuse what it would otherwise adjust.
// (The server itself rejects members it does not know, in strict mode.)
func TestStreamConfigUnknownFieldsServer(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)
	var cfg jsapi.StreamConfig
	if err := json.Unmarshal([]byte(`{"name":"UF","storage":"memory","subject_delete_marker_ttl":1000000000,"pedantic":true}`), &cfg); err != nil {
		t.Fatal(err)
	}
	var ae *jsapi.APIError
	if _, err := js.CreateStream(ctx, cfg); !errors.As(err, &ae) || !strings.Contains(ae.Description, "message TTLs are disabled") {
		t.Fatalf("pedantic create: %v", err)
	}
	cfg.AllowMsgTTL, cfg.AllowRollup = true, true
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}

var _ = context.Background
