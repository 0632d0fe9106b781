package extra_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// TestFastFlowAcrossLeaderChange: a fast-ingest batch into an R3 stream
// goes on across a stream leader step-down. The new leader acknowledges
// where the batch stands, flow control resumes, and the commit counts and
// stores every message, in order, once. (A batch message after the first
// sent while no server answers for the subject gets a 503 and ends the
// batch with jsapi.ErrNoStreamResponse — the publisher keeps no copies to
// resend; only the first message is sent again, RetryStart — so the test
// resumes adding only once a plain publish is answered again.)
func TestFastFlowAcrossLeaderChange(t *testing.T) {
	r := newR3(t, jsapi.StreamConfig{Name: "FL", Subjects: []string{"fl.>"}, AllowBatchPublish: true})
	js, st, ctx, probe := r.js, r.st, r.ctx, r.probe
	if seq := probe(); seq != 1 {
		t.Fatalf("first probe stored at %d", seq)
	}

	const flow, before, after = 10, 25, 25
	p, err := extra.NewFastPublisher(js, extra.Flow(flow))
	if err != nil {
		t.Fatal(err)
	}
	add := func(i int) {
		t.Helper()
		if _, err := p.Add(ctx, "fl.x", fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
	}
	for i := 1; i <= before; i++ {
		add(i)
	}
	// Everything so far is stored before the leader goes.
	waitFor(t, 10*time.Second, "the first messages stored", func() bool { return msgCount(t, st) == before+1 })
	ackedBefore := p.LastAckSeq()

	r.stepDown()

	if seq := probe(); seq != before+2 {
		t.Fatalf("probe after the step-down stored at %d, want %d", seq, before+2)
	}
	for i := before + 1; i <= before+after; i++ {
		add(i)
	}
	ack, err := p.Commit(ctx, "fl.end", []byte("end"))
	if err != nil {
		t.Fatalf("commit after the leader change: %v", err)
	}
	const total = before + after + 1 // the batch; the stream also holds two probes
	if ack.BatchSize != total || ack.Sequence != total+2 || ack.BatchID != p.BatchID() {
		t.Fatalf("commit ack %+v, want batch size %d at sequence %d", ack, total, total+2)
	}
	if p.LastAckSeq() <= ackedBefore {
		t.Fatalf("no flow acknowledgement after the leader change (last %d, %d before)", p.LastAckSeq(), ackedBefore)
	}
	if got := msgCount(t, st); got != total+2 {
		t.Fatalf("stream holds %d messages, want %d", got, total+2)
	}
	// Batch message i is at sequence i+1 before the second probe, i+2 after.
	for i, seq := range map[int]uint64{1: 2, before: before + 1, before + 1: before + 3, total - 1: total + 1} {
		m, err := st.GetMsg(ctx, seq)
		if want := fmt.Sprintf("m%d", i); err != nil || string(m.Data) != want {
			t.Fatalf("seq %d: %v %q, want %q", seq, err, m.Data, want)
		}
	}
}

// r3 is a file-backed R3 stream in a 3-node cluster, for the batch tests
// across a leader change.
type r3 struct {
	t   *testing.T
	cl  *natstest.Cluster
	nc  *conn.Conn
	js  *jsapi.JS
	st  *jsapi.Stream
	ctx context.Context
}

func newR3(t *testing.T, cfg jsapi.StreamConfig) *r3 {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	cl := natstest.NewCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	nc := connect(t, cl.URL())
	js := newJS(t, nc)
	cfg.Replicas, cfg.Storage = 3, jsapi.StorageFile
	st, err := js.CreateStream(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.WaitStreamLeader(cfg.Name); err != nil {
		t.Fatal(err)
	}
	return &r3{t: t, cl: cl, nc: nc, js: js, st: st, ctx: ctx}
}

// probe publishes to <prefix>.probe, retried on 503, and returns its
// sequence: a plain publish that is answered tells that the subject is
// served through the server this client is connected to.
func (r *r3) probe() uint64 {
	r.t.Helper()
	subj := strings.ToLower(r.st.Name()) + ".probe"
	a, err := testutil.Retrying(r.t, r.js, 12, 50*time.Millisecond).Publish(r.ctx, subj, nil)
	if err != nil {
		r.t.Fatalf("probe: %v", err)
	}
	return a.Sequence
}

// stepDown asks the stream's leader to step down and waits for another.
func (r *r3) stepDown() {
	r.t.Helper()
	name := r.st.Name()
	old := r.cl.StreamLeader(name)
	m, err := r.nc.Request(r.ctx, "$JS.API.STREAM.LEADER.STEPDOWN."+name, nil)
	if err != nil {
		r.t.Fatalf("step-down: %v", err)
	}
	var resp struct {
		Success bool            `json:"success"`
		Error   *jsapi.APIError `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil || !resp.Success {
		r.t.Fatalf("step-down: %s (%v)", m.Data, err)
	}
	waitFor(r.t, 20*time.Second, "a new stream leader", func() bool {
		l := r.cl.StreamLeader(name)
		return l != nil && l != old
	})
}

// waitFor polls cond (not a synchronisation: the server's state is only
// observable this way) until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for step := time.Millisecond; !cond(); step = min(2*step, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(step)
	}
}

// TestAtomicBatchAcrossLeaderChange: an atomic batch open at the stream
// leader of an R3 stream when the leader steps down is gone with it. The
// commit, answered by the new leader, fails with a typed error, none of
// the batch is stored, and a new batch commits whole.
func TestAtomicBatchAcrossLeaderChange(t *testing.T) {
	r := newR3(t, jsapi.StreamConfig{Name: "AL", Subjects: []string{"al.>"}, AllowAtomicPublish: true})
	js, st, ctx, probe := r.js, r.st, r.ctx, r.probe
	probe()

	b, err := extra.NewBatchPublisher(js)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := b.Add(ctx, "al.x", []byte{byte('a' + i)}); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
	}
	r.stepDown()
	probe()

	ack, err := b.Commit(ctx, "al.end", []byte("end"))
	if err == nil {
		t.Fatalf("commit of a batch opened at the old leader succeeded: %+v", ack)
	}
	var ae *jsapi.APIError
	if !errors.As(err, &ae) || !errors.Is(err, jsapi.ErrAtomicIncomplete) {
		t.Fatalf("commit after the leader change: %v, want jsapi.ErrAtomicIncomplete", err)
	}
	if n := msgCount(t, st); n != 2 {
		t.Fatalf("stream holds %d messages, want the 2 probes only", n)
	}

	b, err = extra.NewBatchPublisher(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add(ctx, "al.x", []byte("again")); err != nil {
		t.Fatal(err)
	}
	if ack, err := b.Commit(ctx, "al.end", []byte("end")); err != nil || ack.Sequence != 4 || ack.BatchSize != 2 {
		t.Fatalf("new batch: %+v %v", ack, err)
	}
}
