package jsapi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// apiSniffer records the subjects of the API requests of one kind.
type apiSniffer struct {
	sub *conn.Subscription
}

func sniff(t testing.TB, nc *conn.Conn, subject string) *apiSniffer {
	t.Helper()
	sub, err := nc.Subscribe(subject)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return &apiSniffer{sub: sub}
}

// next returns the subject of the next request seen.
func (s *apiSniffer) next(t testing.TB) string {
	t.Helper()
	m, err := s.sub.NextMsg(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return m.Subject
}

// pullOne pulls one message from a pull consumer with a raw pull request
// (so that these tests do not depend on the pull package). Deliveries
// keep the stream subject, so they are read from a dedicated inbox
// subscription rather than with Request.
func pullOne(t testing.TB, nc *conn.Conn, stream, consumer, body string) *conn.Msg {
	t.Helper()
	inbox := nc.NewInbox()
	sub, err := nc.Subscribe(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.PublishMsg("$JS.API.CONSUMER.MSG.NEXT."+stream+"."+consumer, inbox, nil, []byte(body)); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if m.Status() != 0 {
		t.Fatalf("pull: status %d %q", m.Status(), m.Header)
	}
	return m
}

func TestConsumerCRUD(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	mustCreateStream(t, js, jsapi.StreamConfig{Name: "CS", Subjects: []string{"cs.>"}})
	for i := range 3 {
		mustStore(t, nc, fmt.Sprintf("cs.%d", i), "x")
	}
	cfg := jsapi.ConsumerConfig{Durable: "dur", AckPolicy: jsapi.AckExplicit, FilterSubject: "cs.1", Description: "d1"}
	ci, err := js.CreateConsumer(ctx, "CS", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ci.Name != "dur" || ci.Stream != "CS" || ci.Config.Durable != "dur" || ci.Config.AckPolicy != jsapi.AckExplicit ||
		ci.Config.AckWait != 30*time.Second || ci.Config.DeliverPolicy != jsapi.DeliverAll ||
		ci.Config.ReplayPolicy != jsapi.ReplayInstant || ci.Config.MaxDeliver != -1 || ci.NumPending != 1 {
		t.Fatalf("created: %+v", ci)
	}
	// Identical re-create is idempotent, also with the config read back.
	if _, err := js.CreateConsumer(ctx, "CS", cfg); err != nil {
		t.Fatalf("identical re-create: %v", err)
	}
	if _, err := js.CreateConsumer(ctx, "CS", ci.Config); err != nil {
		t.Fatalf("re-create with the config read back: %v", err)
	}
	// A different configuration: exists.
	diff := cfg
	diff.Description = "d2"
	if _, err := js.CreateConsumer(ctx, "CS", diff); !errors.Is(err, jsapi.ErrConsumerExists) {
		t.Fatalf("different config: %v", err)
	}
	// Update it.
	ci, err = js.UpdateConsumer(ctx, "CS", diff)
	if err != nil || ci.Config.Description != "d2" {
		t.Fatalf("update: %+v %v", ci, err)
	}
	// Update of a missing consumer.
	if _, err := js.UpdateConsumer(ctx, "CS", jsapi.ConsumerConfig{Durable: "missing"}); !errors.Is(err, jsapi.ErrConsumerDoesNotExist) {
		t.Fatalf("update missing: %v", err)
	}
	if _, err := js.UpdateConsumer(ctx, "CS", jsapi.ConsumerConfig{}); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("update without name: %v", err)
	}
	// A change the server refuses.
	bad := ci.Config
	bad.DeliverPolicy = jsapi.DeliverNew
	var ae *jsapi.APIError
	if _, err := js.UpdateConsumer(ctx, "CS", bad); !errors.As(err, &ae) {
		t.Fatalf("deliver policy change: %v", err)
	}
	// Create or update: existing and missing.
	diff.Description = "d3"
	if ci, err = js.CreateOrUpdateConsumer(ctx, "CS", diff); err != nil || ci.Config.Description != "d3" {
		t.Fatalf("create-or-update existing: %+v %v", ci, err)
	}
	if ci, err = js.CreateOrUpdateConsumer(ctx, "CS", jsapi.ConsumerConfig{Name: "named", InactiveThreshold: time.Minute}); err != nil ||
		ci.Name != "named" || ci.Config.Durable != "" || ci.Config.InactiveThreshold != time.Minute || ci.NumPending != 3 {
		t.Fatalf("create-or-update missing: %+v %v", ci, err)
	}

	// Info, through the stream and through JS.
	if ci, err = js.Consumer(ctx, "CS", "dur"); err != nil || ci.Config.Description != "d3" {
		t.Fatalf("info: %+v %v", ci, err)
	}
	if ci, err = js.Consumer(ctx, "CS", "named"); err != nil || ci.Name != "named" {
		t.Fatalf("js info: %+v %v", ci, err)
	}
	if _, err := js.Consumer(ctx, "CS", "nope"); !errors.Is(err, jsapi.ErrConsumerNotFound) {
		t.Fatalf("info missing: %v", err)
	}
	if _, err := js.Consumer(ctx, "NOSTREAM", "nope"); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("info missing stream: %v", err)
	}
	if _, err := js.CreateConsumer(ctx, "NOSTREAM", jsapi.ConsumerConfig{Durable: "x"}); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("create on missing stream: %v", err)
	}

	// Delete.
	if err := js.DeleteConsumer(ctx, "CS", "dur"); err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteConsumer(ctx, "CS", "dur"); !errors.Is(err, jsapi.ErrConsumerNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	if _, err := js.Consumer(ctx, "CS", "dur"); !errors.Is(err, jsapi.ErrConsumerNotFound) {
		t.Fatalf("info deleted: %v", err)
	}

	// Client-side checks, before any I/O.
	if _, err := js.CreateConsumer(ctx, "CS", jsapi.ConsumerConfig{Name: "a", Durable: "b"}); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("name/durable mismatch: %v", err)
	}
	for _, name := range []string{"a.b", "a b", "a*", "a>"} {
		if _, err := js.CreateConsumer(ctx, "CS", jsapi.ConsumerConfig{Durable: name}); !errors.Is(err, jsapi.ErrInvalidName) {
			t.Fatalf("durable %q: %v", name, err)
		}
		if _, err := js.Consumer(ctx, "CS", name); !errors.Is(err, jsapi.ErrInvalidName) {
			t.Fatalf("info %q: %v", name, err)
		}
		if _, err := js.CreateConsumer(ctx, name, jsapi.ConsumerConfig{Durable: "ok"}); !errors.Is(err, jsapi.ErrInvalidName) {
			t.Fatalf("stream %q: %v", name, err)
		}
	}
}

// TestConsumerCreateSubjects checks the request subjects: the name, the
// filter when it is one literal subject, and the bare form for
// server-named consumers.
func TestConsumerCreateSubjects(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	mustCreateStream(t, js, jsapi.StreamConfig{Name: "SUBJ", Subjects: []string{"o.>"}})
	sn := sniff(t, nc, "$JS.API.CONSUMER.CREATE.>")
	cases := []struct {
		cfg  jsapi.ConsumerConfig
		want string
	}{
		{jsapi.ConsumerConfig{Durable: "d1", FilterSubject: "o.new"}, "$JS.API.CONSUMER.CREATE.SUBJ.d1.o.new"},
		{jsapi.ConsumerConfig{Name: "n1", FilterSubject: "o.*"}, "$JS.API.CONSUMER.CREATE.SUBJ.n1"},
		{jsapi.ConsumerConfig{Durable: "d2", FilterSubjects: []string{"o.a", "o.b"}}, "$JS.API.CONSUMER.CREATE.SUBJ.d2"},
		{jsapi.ConsumerConfig{Durable: "d3"}, "$JS.API.CONSUMER.CREATE.SUBJ.d3"},
		{jsapi.ConsumerConfig{FilterSubject: "o.x"}, "$JS.API.CONSUMER.CREATE.SUBJ"},
	}
	for _, c := range cases {
		ci, err := js.CreateConsumer(ctx, "SUBJ", c.cfg)
		if err != nil {
			t.Fatalf("%+v: %v", c.cfg, err)
		}
		if got := sn.next(t); got != c.want {
			t.Fatalf("subject %s, want %s", got, c.want)
		}
		if c.cfg.Name == "" && c.cfg.Durable == "" {
			if ci.Name == "" || ci.Config.FilterSubject != "o.x" {
				t.Fatalf("ephemeral: %+v", ci)
			}
			if got, err := js.Consumer(ctx, "SUBJ", ci.Name); err != nil || got.Name != ci.Name {
				t.Fatalf("ephemeral info: %v", err)
			}
		}
		if len(c.cfg.FilterSubjects) > 0 && len(ci.Config.FilterSubjects) != 2 {
			t.Fatalf("filter subjects: %+v", ci.Config)
		}
	}
}

// TestConsumerListPaging lists more consumers than one page of names
// (1024) and of infos (256).
func TestConsumerListPaging(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxTimeout(t, 2*time.Minute)
	mustCreateStream(t, js, jsapi.StreamConfig{Name: "MANY", MaxConsumers: 2000})
	const n = 1030
	for i := range n {
		if _, err := js.CreateConsumer(ctx, "MANY", jsapi.ConsumerConfig{Durable: fmt.Sprintf("c%04d", i), MemoryStorage: true}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	prev := ""
	for name, err := range js.ConsumerNames(ctx, "MANY") {
		if err != nil {
			t.Fatal(err)
		}
		if name <= prev {
			t.Fatalf("names not in order: %s after %s", name, prev)
		}
		prev = name
		seen[name]++
	}
	if len(seen) != n {
		t.Fatalf("ConsumerNames: %d distinct names, want %d", len(seen), n)
	}
	for ci, err := range js.Consumers(ctx, "MANY") {
		if err != nil {
			t.Fatal(err)
		}
		if ci.Stream != "MANY" {
			t.Fatalf("consumer of %s", ci.Stream)
		}
		seen[ci.Name]++
	}
	for name, c := range seen {
		if c != 2 {
			t.Fatalf("%s seen %d times in names+list, want 2", name, c)
		}
	}
	// A missing stream is yielded as an error.
	for name, err := range js.ConsumerNames(ctx, "NOSTREAM") {
		if !errors.Is(err, jsapi.ErrStreamNotFound) || name != "" {
			t.Fatalf("missing stream: %q %v", name, err)
		}
	}
	for _, err := range js.Consumers(ctx, "bad.name") {
		if !errors.Is(err, jsapi.ErrInvalidName) {
			t.Fatalf("bad name: %v", err)
		}
	}
}

func TestConsumerPauseResume(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)
	mustCreateStream(t, js, jsapi.StreamConfig{Name: "PAUSE"})
	if _, err := js.CreateConsumer(ctx, "PAUSE", jsapi.ConsumerConfig{Durable: "p", AckPolicy: jsapi.AckExplicit}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	ps, err := js.PauseConsumer(ctx, "PAUSE", "p", until)
	if err != nil {
		t.Fatal(err)
	}
	if !ps.Paused || !ps.PauseUntil.Equal(until) || ps.PauseRemaining <= 59*time.Minute {
		t.Fatalf("pause: %+v", ps)
	}
	ci, err := js.Consumer(ctx, "PAUSE", "p")
	if err != nil || !ci.Paused || !ci.Config.PauseUntil.Equal(until) || ci.PauseRemaining <= 0 {
		t.Fatalf("paused info: %+v %v", ci, err)
	}
	ps, err = js.ResumeConsumer(ctx, "PAUSE", "p")
	if err != nil || ps.Paused {
		t.Fatalf("resume: %+v %v", ps, err)
	}
	ci, err = js.Consumer(ctx, "PAUSE", "p")
	if err != nil || ci.Paused || !ci.Config.PauseUntil.IsZero() {
		t.Fatalf("resumed info: %+v %v", ci, err)
	}
	// A past time resumes too.
	if ps, err = js.PauseConsumer(ctx, "PAUSE", "p", time.Now().Add(-time.Minute)); err != nil || ps.Paused {
		t.Fatalf("pause in the past: %+v %v", ps, err)
	}
	// Created paused.
	ci, err = js.CreateConsumer(ctx, "PAUSE", jsapi.ConsumerConfig{Durable: "p2", PauseUntil: until})
	if err != nil || !ci.Paused {
		t.Fatalf("created paused: %+v %v", ci, err)
	}
	if _, err := js.PauseConsumer(ctx, "PAUSE", "nope", until); !errors.Is(err, jsapi.ErrConsumerNotFound) {
		t.Fatalf("pause missing: %v", err)
	}
	if _, err := js.PauseConsumer(ctx, "NOSTREAM", "nope", until); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("pause missing stream: %v", err)
	}
}

func TestConsumerReset(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	mustCreateStream(t, js, jsapi.StreamConfig{Name: "RESET", Subjects: []string{"rs.>"}})
	for i := range 10 {
		mustStore(t, nc, "rs.x", fmt.Sprint(i+1))
	}
	if _, err := js.CreateConsumer(ctx, "RESET", jsapi.ConsumerConfig{Durable: "r", AckPolicy: jsapi.AckExplicit}); err != nil {
		t.Fatal(err)
	}
	// Deliver and acknowledge 1..3, deliver 4 without acknowledging.
	for i := 1; i <= 4; i++ {
		m := pullOne(t, nc, "RESET", "r", `{"batch":1}`)
		if string(m.Data) != fmt.Sprint(i) {
			t.Fatalf("pull %d: %q", i, m.Data)
		}
		if i < 4 {
			if _, err := nc.Request(ctx, m.Reply, []byte("+ACK")); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Back to the ack floor.
	ci, seq, err := js.ResetConsumer(ctx, "RESET", "r", 0)
	if err != nil {
		t.Fatal(err)
	}
	if seq != 4 || ci.Name != "r" || ci.AckFloor.Stream != 3 || ci.NumAckPending != 0 {
		t.Fatalf("reset to floor: seq %d %+v", seq, ci)
	}
	if m := pullOne(t, nc, "RESET", "r", `{"batch":1}`); string(m.Data) != "4" {
		t.Fatalf("after reset: %q", m.Data)
	}
	// To an explicit sequence, backwards.
	if _, seq, err = js.ResetConsumer(ctx, "RESET", "r", 2); err != nil || seq != 2 {
		t.Fatalf("reset to 2: %d %v", seq, err)
	}
	if m := pullOne(t, nc, "RESET", "r", `{"batch":1}`); string(m.Data) != "2" {
		t.Fatalf("after reset to 2: %q", m.Data)
	}
	// Not allowed for a deliver-new consumer.
	if _, err := js.CreateConsumer(ctx, "RESET", jsapi.ConsumerConfig{Durable: "new", DeliverPolicy: jsapi.DeliverNew, AckPolicy: jsapi.AckExplicit}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := js.ResetConsumer(ctx, "RESET", "new", 1); !errors.Is(err, jsapi.ErrInvalidReset) {
		t.Fatalf("reset deliver-new: %v", err)
	}
	// Missing consumer or stream.
	if _, _, err := js.ResetConsumer(ctx, "RESET", "nope", 1); !errors.Is(err, jsapi.ErrConsumerNotFound) {
		t.Fatalf("reset missing consumer: %v", err)
	}
	if _, _, err := js.ResetConsumer(ctx, "NOSTREAM", "nope", 1); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("reset missing stream: %v", err)
	}
}

func TestConsumerUnpin(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	mustCreateStream(t, js, jsapi.StreamConfig{Name: "PIN", Subjects: []string{"pin.>"}})
	for i := range 3 {
		mustStore(t, nc, "pin.x", fmt.Sprint(i))
	}
	ci, err := js.CreateConsumer(ctx, "PIN", jsapi.ConsumerConfig{
		Durable: "pc", AckPolicy: jsapi.AckExplicit,
		PriorityPolicy: jsapi.PriorityPinnedClient, PriorityGroups: []string{"A"}, PriorityTimeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if ci.Config.PriorityPolicy != jsapi.PriorityPinnedClient || ci.Config.PriorityTimeout != time.Minute || len(ci.Config.PriorityGroups) != 1 {
		t.Fatalf("pinned config: %+v", ci.Config)
	}
	m := pullOne(t, nc, "PIN", "pc", `{"batch":1,"group":"A"}`)
	pin := m.Header.Get("Nats-Pin-Id")
	if pin == "" {
		t.Fatalf("no pin id: %q", m.Header)
	}
	ci, err = js.Consumer(ctx, "PIN", "pc")
	if err != nil || len(ci.PriorityGroups) != 1 || ci.PriorityGroups[0].Group != "A" || ci.PriorityGroups[0].PinnedClientID != pin ||
		ci.PriorityGroups[0].PinnedTS.IsZero() {
		t.Fatalf("pinned state: %+v %v", ci.PriorityGroups, err)
	}
	if err := js.UnpinConsumer(ctx, "PIN", "pc", "A"); err != nil {
		t.Fatal(err)
	}
	ci, err = js.Consumer(ctx, "PIN", "pc")
	if err != nil || len(ci.PriorityGroups) != 1 || ci.PriorityGroups[0].PinnedClientID != "" {
		t.Fatalf("after unpin: %+v %v", ci.PriorityGroups, err)
	}
	// The next pull gets a new pin.
	m = pullOne(t, nc, "PIN", "pc", `{"batch":1,"group":"A"}`)
	if p := m.Header.Get("Nats-Pin-Id"); p == "" || p == pin {
		t.Fatalf("new pin %q (old %q)", p, pin)
	}
	if err := js.UnpinConsumer(ctx, "PIN", "pc", "B"); !errors.Is(err, jsapi.ErrPriorityGroupConfig) {
		t.Fatalf("unknown group: %v", err)
	}
	if err := js.UnpinConsumer(ctx, "PIN", "pc", ""); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("empty group: %v", err)
	}
	if err := js.UnpinConsumer(ctx, "PIN", "nope", "A"); !errors.Is(err, jsapi.ErrConsumerNotFound) {
		t.Fatalf("missing consumer: %v", err)
	}
}

func TestConsumerConfigUnknownFields(t *testing.T) {
	in := `{"durable_name":"d","deliver_policy":"by_start_time","opt_start_time":"2025-01-02T03:04:05.000000006Z",` +
		`"ack_policy":"explicit","ack_wait":30000000000,"backoff":[1000000000,2000000000],"filter_subjects":["a","b"],` +
		`"priority_policy":"overflow","priority_groups":["g"],"priority_timeout":5,"replay_policy":"original",` +
		`"num_replicas":0,"future_knob":[{"x":1}],"direct":true}`
	var cfg jsapi.ConsumerConfig
	if err := json.Unmarshal([]byte(in), &cfg); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	if cfg.Durable != "d" || cfg.DeliverPolicy != jsapi.DeliverByStartTime || !cfg.OptStartTime.Equal(want) ||
		cfg.AckPolicy != jsapi.AckExplicit || len(cfg.BackOff) != 2 || cfg.BackOff[1] != 2*time.Second ||
		cfg.PriorityPolicy != jsapi.PriorityOverflow || cfg.PriorityTimeout != 5 || cfg.ReplayPolicy != jsapi.ReplayOriginal {
		t.Fatalf("decoded: %+v", cfg)
	}
	cfg.MaxAckPending = 7
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if string(m["future_knob"]) != `[{"x":1}]` || string(m["direct"]) != "true" || string(m["max_ack_pending"]) != "7" ||
		string(m["opt_start_time"]) != `"2025-01-02T03:04:05.000000006Z"` {
		t.Fatalf("round trip: %s", out)
	}
	// Nested in ConsumerInfo.
	var ci jsapi.ConsumerInfo
	if err := json.Unmarshal([]byte(`{"name":"d","config":`+in+`,"num_pending":4}`), &ci); err != nil {
		t.Fatal(err)
	}
	out, _ = json.Marshal(ci.Config)
	if !strings.Contains(string(out), `"future_knob":[{"x":1}]`) || ci.NumPending != 4 {
		t.Fatalf("nested: %s", out)
	}
	// A zero configuration sends nothing.
	if out, _ := json.Marshal(jsapi.ConsumerConfig{}); string(out) != `{}` {
		t.Fatalf("zero config: %s", out)
	}
	if out, _ := json.Marshal(jsapi.ConsumerConfig{Durable: "x", AckPolicy: jsapi.AckAll, PauseUntil: want}); string(out) !=
		`{"durable_name":"x","ack_policy":"all","pause_until":"2025-01-02T03:04:05.000000006Z"}` {
		t.Fatalf("config: %s", out)
	}
}
