package micro_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/micro"
	"github.com/natsio/natsio/proto"
)

// A service with a root endpoint, two endpoints and a nested group answers
// on the expected subjects, and INFO reports each with its subject and
// queue group.
func TestEndpointsAndGroupsAnswer(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	svc := addService(t, nc, micro.Config{
		Name: "calc", Version: "1.0.0", Description: "arithmetic",
		Endpoint: &micro.EndpointConfig{Subject: "calc.root", Handler: echo("root:")},
	})
	if err := svc.AddEndpoint("upper", echo("upper:")); err != nil {
		t.Fatal(err)
	}
	if err := svc.AddEndpoint("lower", echo("lower:"), micro.EndpointSubject("calc.lower"),
		micro.EndpointMetadata(map[string]string{"k": "v"})); err != nil {
		t.Fatal(err)
	}
	math := svc.AddGroup("math")
	if err := math.AddEndpoint("add", echo("add:")); err != nil {
		t.Fatal(err)
	}
	v2 := math.AddGroup("v2", micro.GroupQueueGroup("fast"))
	if err := v2.AddEndpoint("mul", echo("mul:"), micro.EndpointSubject("times")); err != nil {
		t.Fatal(err)
	}
	wild := svc.AddGroup("any")
	if err := wild.AddEndpoint("star", micro.HandlerFunc(func(r micro.Request) {
		r.Respond([]byte(r.Subject()))
	}), micro.EndpointSubject("*"), micro.EndpointNoQueueGroup()); err != nil {
		t.Fatal(err)
	}

	for subj, want := range map[string]string{
		"calc.root":     "root:x",
		"upper":         "upper:x",
		"calc.lower":    "lower:x",
		"math.add":      "add:x",
		"math.v2.times": "mul:x",
		"any.thing":     "any.thing",
	} {
		if got := request(t, nc, subj, "x"); got != want {
			t.Errorf("%s: got %q, want %q", subj, got, want)
		}
	}

	want := []micro.EndpointInfo{
		{Name: "default", Subject: "calc.root", QueueGroup: "q"},
		{Name: "upper", Subject: "upper", QueueGroup: "q"},
		{Name: "lower", Subject: "calc.lower", QueueGroup: "q", Metadata: map[string]string{"k": "v"}},
		{Name: "add", Subject: "math.add", QueueGroup: "q"},
		{Name: "mul", Subject: "math.v2.times", QueueGroup: "fast"},
		{Name: "star", Subject: "any.*", QueueGroup: ""},
	}
	info := svc.Info()
	if info.Type != micro.InfoResponseType || info.Name != "calc" || info.ID != svc.ID() || info.Description != "arithmetic" {
		t.Fatalf("info = %+v", info)
	}
	if len(info.Endpoints) != len(want) {
		t.Fatalf("endpoints = %+v", info.Endpoints)
	}
	for i, w := range want {
		g := info.Endpoints[i]
		if g.Name != w.Name || g.Subject != w.Subject || g.QueueGroup != w.QueueGroup || len(g.Metadata) != len(w.Metadata) || g.Metadata["k"] != w.Metadata["k"] {
			t.Errorf("endpoint %d = %+v, want %+v", i, g, w)
		}
	}
}

// Request exposes the message; headers reach the handler and a response's
// headers reach the requester.
func TestRequestAccessorsAndHeaders(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	svc := addService(t, nc, micro.Config{Name: "hdr", Version: "0.1.0"})
	err := svc.AddEndpoint("h", micro.HandlerFunc(func(r micro.Request) {
		var h proto.Header
		h.Set("X-Echo", r.Headers().Get("X-In"))
		h.Set("X-Subject", r.Subject())
		h.Set("X-Endpoint", r.Endpoint().Name())
		r.Respond(r.Data(), micro.RespondHeader(&h))
	}))
	if err != nil {
		t.Fatal(err)
	}
	var h proto.Header
	h.Set("X-In", "hello")
	m, err := nc.RequestMsg(ctxT(t), "h", &h, []byte("body"))
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data) != "body" || m.Header.Get("X-Echo") != "hello" ||
		m.Header.Get("X-Subject") != "h" || m.Header.Get("X-Endpoint") != "h" {
		t.Fatalf("reply %q headers %q", m.Data, m.Header)
	}
	if micro.ResponseError(m) != nil {
		t.Fatalf("ResponseError = %v on a plain reply", micro.ResponseError(m))
	}
}

// Two instances in the default queue group share the requests: each
// handles some, and together exactly all.
func TestQueueGroupLoadSharing(t *testing.T) {
	s := startServer(t)
	client := connect(t, s.URL())
	var svcs [2]*micro.Service
	for i := range svcs {
		nc := connect(t, s.URL())
		svcs[i] = addService(t, nc, micro.Config{Name: "shared", Version: "1.0.0"})
		if err := svcs[i].AddEndpoint("work", echo(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		// The interest has reached the server before requests are sent.
		if err := nc.Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	const n = 200
	var got [2]int
	for range n {
		r := request(t, client, "work", "")
		switch r {
		case "0", "1":
			got[r[0]-'0']++
		default:
			t.Fatalf("reply %q", r)
		}
	}
	if got[0] == 0 || got[1] == 0 || got[0]+got[1] != n {
		t.Fatalf("replies per instance %v", got)
	}
	// Requests are counted before their handler runs, so every answered
	// request is in the stats.
	var total uint64
	for i, svc := range svcs {
		st := svc.Stats()
		if len(st.Endpoints) != 1 || st.Endpoints[0].QueueGroup != "q" {
			t.Fatalf("stats %+v", st)
		}
		if c := st.Endpoints[0].NumRequests; c != uint64(got[i]) {
			t.Errorf("instance %d counted %d requests, answered %d", i, c, got[i])
		}
		total += st.Endpoints[0].NumRequests
	}
	if total != n {
		t.Fatalf("total %d, want %d", total, n)
	}
}

// Without queue group every instance receives every request.
func TestNoQueueGroupFansOut(t *testing.T) {
	s := startServer(t)
	client := connect(t, s.URL())
	var svcs [2]*micro.Service
	for i := range svcs {
		nc := connect(t, s.URL())
		svcs[i] = addService(t, nc, micro.Config{Name: "fan", Version: "1.0.0", NoQueueGroup: true})
		if err := svcs[i].AddEndpoint("all", echo("")); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	const n = 20
	for range n {
		request(t, client, "all", "x")
	}
	for i, svc := range svcs {
		eventually(t, fmt.Sprintf("instance %d to see all requests", i), func() bool {
			return svc.Stats().Endpoints[0].NumRequests == n
		})
		if q := svc.Info().Endpoints[0].QueueGroup; q != "" {
			t.Fatalf("queue group %q", q)
		}
	}
}

// Stop drains the subscriptions: afterwards requests find no responders,
// discovery no longer sees the instance, endpoints cannot be added, and
// DoneHandler has run exactly once (also after a second Stop).
func TestStopUnsubscribesAndCallsDoneOnce(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	var done atomic.Int32
	svc, err := micro.AddService(nc, micro.Config{
		Name: "stopper", Version: "1.0.0",
		DoneHandler: func(*micro.Service) { done.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.AddEndpoint("ep", echo("")); err != nil {
		t.Fatal(err)
	}
	if got := request(t, nc, "ep", "x"); got != "x" {
		t.Fatalf("reply %q", got)
	}
	if svc.Stopped() {
		t.Fatal("stopped before Stop")
	}
	if err := svc.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if !svc.Stopped() {
		t.Fatal("not stopped after Stop")
	}
	// The echo handler may still be returning from the call whose reply
	// the request above read: Stop then returns without waiting for it (as
	// when called from a handler), and Done follows when it returns.
	select {
	case <-svc.Done():
	case <-ctxT(t).Done():
		t.Fatal("Done not closed after Stop")
	}
	if n := done.Load(); n != 1 {
		t.Fatalf("DoneHandler called %d times", n)
	}
	// Stop waited for the server to process the UNSUBs.
	if _, err := nc.Request(ctxT(t), "ep", nil); !errors.Is(err, conn.ErrNoResponders) {
		t.Fatalf("request after Stop: %v, want no responders", err)
	}
	for _, subj := range []string{"$SRV.PING", "$SRV.INFO.stopper", "$SRV.STATS.stopper." + svc.ID()} {
		if _, err := nc.Request(ctxT(t), subj, nil); !errors.Is(err, conn.ErrNoResponders) {
			t.Fatalf("%s after Stop: %v, want no responders", subj, err)
		}
	}
	if err := svc.AddEndpoint("late", echo("")); !errors.Is(err, micro.ErrStopped) {
		t.Fatalf("AddEndpoint after Stop: %v", err)
	}
	if err := svc.Stop(ctxT(t)); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if n := done.Load(); n != 1 {
		t.Fatalf("DoneHandler called %d times after a second Stop", n)
	}
}

// A handler may stop its own service.
func TestStopFromHandler(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	var svc *micro.Service
	stopped := make(chan error, 1)
	svc = addService(t, nc, micro.Config{Name: "selfstop", Version: "1.0.0"})
	if err := svc.AddEndpoint("quit", micro.HandlerFunc(func(r micro.Request) {
		r.Respond([]byte("bye"))
		stopped <- svc.Stop(context.Background())
	})); err != nil {
		t.Fatal(err)
	}
	if got := request(t, nc, "quit", ""); got != "bye" {
		t.Fatalf("reply %q", got)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Request(ctxT(t), "quit", nil); !errors.Is(err, conn.ErrNoResponders) {
		t.Fatalf("after Stop: %v", err)
	}
	// Done follows once the handler that called Stop has returned.
	select {
	case <-svc.Done():
	case <-ctxT(t).Done():
		t.Fatal("Done not closed after the stopping handler returned")
	}
}

// A handler still running when Stop has drained the subscriptions keeps
// Done open until it returns; its response still goes out.
func TestDoneWaitsForRunningHandler(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	var doneCalls atomic.Int32
	handled := make(chan struct{})
	entered := make(chan struct{})
	release := make(chan struct{})
	svc := addService(t, nc, micro.Config{Name: "slow", Version: "1.0.0",
		DoneHandler: func(*micro.Service) {
			if doneCalls.Add(1) == 1 {
				close(handled)
			}
		}})
	if err := svc.AddEndpoint("work", micro.HandlerFunc(func(r micro.Request) {
		close(entered)
		<-release
		_ = r.Respond([]byte("finished"))
	})); err != nil {
		t.Fatal(err)
	}
	reply := make(chan string, 1)
	go func() {
		m, err := nc.Request(ctxT(t), "work", nil)
		if err != nil {
			reply <- err.Error()
			return
		}
		reply <- string(m.Data)
	}()
	<-entered
	if err := svc.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-svc.Done():
		t.Fatal("Done closed while a handler was running")
	default:
	}
	if n := doneCalls.Load(); n != 0 {
		t.Fatalf("DoneHandler called %d times while a handler was running", n)
	}
	close(release)
	select {
	case <-svc.Done():
	case <-ctxT(t).Done():
		t.Fatal("Done not closed after the handler returned")
	}
	if got := <-reply; got != "finished" {
		t.Fatalf("reply of the request in flight at Stop: %q", got)
	}
	// DoneHandler runs right after Done is closed, on another goroutine.
	select {
	case <-handled:
	case <-ctxT(t).Done():
		t.Fatal("DoneHandler not called")
	}
	if err := svc.Stop(ctxT(t)); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if n := doneCalls.Load(); n != 1 {
		t.Fatalf("DoneHandler called %d times", n)
	}
}

// Closing the connection stops the service: DoneHandler once, Stopped,
// and Stop afterwards is no error.
func TestConnectionCloseStopsService(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	var done atomic.Int32
	var errs atomic.Int32
	svc, err := micro.AddService(nc, micro.Config{
		Name: "closer", Version: "1.0.0",
		DoneHandler: func(*micro.Service) { done.Add(1) },
		ErrHandler:  func(*micro.Service, error) { errs.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	select {
	case <-svc.Done():
	case <-ctxT(t).Done():
		t.Fatal("service did not stop when its connection closed")
	}
	if !svc.Stopped() {
		t.Fatal("not Stopped")
	}
	if err := svc.Stop(ctxT(t)); err != nil {
		t.Fatalf("Stop after Close: %v", err)
	}
	eventually(t, "DoneHandler", func() bool { return done.Load() == 1 })
	if n := errs.Load(); n != 0 {
		t.Fatalf("ErrHandler called %d times for a user's Close", n)
	}
	if _, err := micro.AddService(nc, micro.Config{Name: "closer", Version: "1.0.0"}); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("AddService on a closed connection: %v", err)
	}
}

// AddService, requests, discovery and Stop leave no goroutine of the
// service running (the connection's own stay until Close).
func TestNoGoroutineLeakAfterStop(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	client := connect(t, s.URL())
	// Warm up the client's request inbox and the connection goroutines.
	if _, err := client.Request(ctxT(t), "nobody", nil); !errors.Is(err, conn.ErrNoResponders) {
		t.Fatal(err)
	}
	before := leakcheck.Snapshot()
	svc, err := micro.AddService(nc, micro.Config{
		Name: "leaky", Version: "1.0.0",
		StatsHandler: func(*micro.Endpoint) any { return 1 },
		Endpoint:     &micro.EndpointConfig{Subject: "leak.root", Handler: echo("")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.AddGroup("leak").AddEndpoint("a", echo("")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil { // the interest is at the server
		t.Fatal(err)
	}
	request(t, client, "leak.a", "x")
	request(t, client, "leak.root", "x")
	if _, err := micro.StatsOf(ctxT(t), client, "leaky", micro.DiscoverID(svc.ID())); err != nil {
		t.Fatal(err)
	}
	if _, err := micro.Infos(ctxT(t), client, "leaky", micro.DiscoverID(svc.ID())); err != nil {
		t.Fatal(err)
	}
	if err := svc.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	leakcheck.Wait(t, before, 10*time.Second)
}
