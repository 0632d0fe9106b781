package micro_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/micro"
	"github.com/natsio/natsio/proto"
)

// Requests, errors (Error, error headers, failed responses), processing
// time and its average are counted per endpoint; StatsHandler supplies
// "data"; Reset zeroes the counters and keeps the start time.
func TestStatsCountRequestsErrorsAndTime(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	svc := addService(t, nc, micro.Config{
		Name: "counted", Version: "1.0.0",
		StatsHandler: func(e *micro.Endpoint) any { return map[string]string{"ep": e.Name()} },
	})
	err := svc.AddEndpoint("work", micro.HandlerFunc(func(r micro.Request) {
		n, err := strconv.Atoi(string(r.Data()))
		switch {
		case err != nil:
			r.Error("400", "not a number", []byte("detail"))
		case n < 0:
			var h proto.Header
			h.Set(micro.ErrorCodeHeader, "422")
			h.Set(micro.ErrorHeader, "negative")
			r.Respond(nil, micro.RespondHeader(&h))
		default:
			r.RespondJSON(map[string]int{"double": 2 * n})
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.AddEndpoint("idle", echo("")); err != nil {
		t.Fatal(err)
	}

	for i := range 5 {
		m, err := nc.Request(ctxT(t), "work", []byte(strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]int
		if err := json.Unmarshal(m.Data, &v); err != nil || v["double"] != 2*i {
			t.Fatalf("reply %q: %v", m.Data, err)
		}
	}
	m, err := nc.Request(ctxT(t), "work", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	var se *micro.ServiceError
	if !errors.As(micro.ResponseError(m), &se) || se.Code != "400" || se.Description != "not a number" || string(m.Data) != "detail" {
		t.Fatalf("error reply %q headers %q: %v", m.Data, m.Header, micro.ResponseError(m))
	}
	m, err = nc.Request(ctxT(t), "work", []byte("-1"))
	if err != nil {
		t.Fatal(err)
	}
	if !errors.As(micro.ResponseError(m), &se) || se.Code != "422" {
		t.Fatalf("header error reply: %v", micro.ResponseError(m))
	}

	// Requests and errors are counted before the reply is sent; the
	// processing time once the handler has returned.
	var st micro.Stats
	eventually(t, "processing time of 7 requests", func() bool {
		st = svc.Stats()
		return st.Endpoints[0].ProcessingTime > 0 && st.Endpoints[0].AverageProcessingTime > 0
	})
	w := st.Endpoints[0]
	if w.NumRequests != 7 || w.NumErrors != 2 || w.LastError != "422:negative" {
		t.Fatalf("work stats %+v", w)
	}
	if w.AverageProcessingTime > w.ProcessingTime || w.AverageProcessingTime < w.ProcessingTime/7 {
		t.Fatalf("average %v of total %v over 7", w.AverageProcessingTime, w.ProcessingTime)
	}
	if string(w.Data) != `{"ep":"work"}` || string(st.Endpoints[1].Data) != `{"ep":"idle"}` {
		t.Fatalf("data %s / %s", w.Data, st.Endpoints[1].Data)
	}
	idle := st.Endpoints[1]
	if idle.NumRequests != 0 || idle.NumErrors != 0 || idle.ProcessingTime != 0 || idle.AverageProcessingTime != 0 || idle.LastError != "" {
		t.Fatalf("idle stats %+v", idle)
	}
	// The same over the wire, typed.
	remote, err := micro.StatsOf(ctxT(t), nc, "counted", micro.DiscoverID(svc.ID()))
	if err != nil || len(remote) != 1 {
		t.Fatalf("StatsOf: %v %v", remote, err)
	}
	// The last handler may still be returning: time only grows.
	if r := remote[0].Endpoints[0]; r.NumRequests != 7 || r.NumErrors != 2 || r.ProcessingTime < w.ProcessingTime || string(r.Data) != `{"ep":"work"}` {
		t.Fatalf("remote stats %+v, local %+v", r, w)
	}
	if !remote[0].Started.Equal(st.Started) {
		t.Fatalf("started %v, local %v", remote[0].Started, st.Started)
	}

	svc.Reset()
	after := svc.Stats()
	if z := after.Endpoints[0]; z.NumRequests != 0 || z.NumErrors != 0 || z.ProcessingTime != 0 || z.AverageProcessingTime != 0 || z.LastError != "" {
		t.Fatalf("after Reset %+v", z)
	}
	if !after.Started.Equal(st.Started) {
		t.Fatal("Reset changed the start time")
	}
	request(t, nc, "idle", "x")
	if n := svc.Stats().Endpoints[1].NumRequests; n != 1 {
		t.Fatalf("counting after Reset: %d", n)
	}
}

// Error validates its arguments (an empty description: nothing sent; a
// code that is not an integer: sent as 500; both counted); a response
// that cannot be sent counts as an error; a reply may be sent later from
// another goroutine.
func TestRespondFailuresCount(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	svc := addService(t, nc, micro.Config{Name: "fails", Version: "1.0.0"})
	results := make(chan error, 4)
	var wg sync.WaitGroup
	err := svc.AddEndpoint("bad", micro.HandlerFunc(func(r micro.Request) {
		results <- r.Error("E42", "not numeric", nil)
		results <- r.Error("500", "", nil)
		results <- r.RespondJSON(func() {}) // cannot be encoded
		// Answered later, elsewhere.
		go func() {
			defer wg.Done()
			results <- r.Error("503", "later", nil)
		}()
	}))
	if err != nil {
		t.Fatal(err)
	}
	// Added before the request: the reply can arrive, and Wait run, before
	// the handler reaches its go statement.
	wg.Add(1)
	m, err := nc.Request(ctxT(t), "bad", nil)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if se, ok := micro.ResponseError(m).(*micro.ServiceError); !ok || se.Code != "500" || se.Description != "not numeric" {
		t.Fatalf("reply error %v, want the non-integer code's error sent as 500", micro.ResponseError(m))
	}
	for i, want := range []error{micro.ErrInvalidServiceError, micro.ErrInvalidServiceError, nil, nil} {
		got := <-results
		if i == 2 {
			if got == nil {
				t.Fatal("RespondJSON of a func: no error")
			}
			continue
		}
		if !errors.Is(got, want) {
			t.Fatalf("result %d: %v, want %v", i, got, want)
		}
	}
	st := svc.Stats().Endpoints[0]
	if st.NumRequests != 1 || st.NumErrors != 4 || st.LastError != "503:later" {
		t.Fatalf("stats %+v", st)
	}

	// A request without a reply subject: responding fails and counts.
	got := make(chan error, 1)
	if err := svc.AddEndpoint("noreply", micro.HandlerFunc(func(r micro.Request) { got <- r.Respond([]byte("x")) })); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("noreply", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if !errors.Is(err, conn.ErrNoReply) {
			t.Fatalf("respond without reply: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("handler not called")
	}
	if st := svc.Stats().Endpoints[1]; st.NumErrors != 1 || st.LastError != conn.ErrNoReply.Error() {
		t.Fatalf("noreply stats %+v", st)
	}

	// The zero Request fails cleanly.
	var zero micro.Request
	if err := zero.Respond(nil); !errors.Is(err, micro.ErrInvalidConfig) {
		t.Fatalf("zero Request: %v", err)
	}
	if zero.Data() != nil || zero.Subject() != "" {
		t.Fatal("zero Request accessors")
	}
}

// A StatsHandler result that cannot be encoded is reported to ErrHandler
// and left out.
func TestStatsHandlerEncodingError(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	errs := make(chan error, 4)
	svc := addService(t, nc, micro.Config{
		Name: "baddata", Version: "1.0.0",
		StatsHandler: func(*micro.Endpoint) any { return func() {} },
		ErrHandler:   func(_ *micro.Service, err error) { errs <- err },
	})
	if err := svc.AddEndpoint("e", echo("")); err != nil {
		t.Fatal(err)
	}
	st, err := micro.StatsOf(ctxT(t), nc, "baddata", micro.DiscoverID(svc.ID()))
	if err != nil || len(st) != 1 || st[0].Endpoints[0].Data != nil {
		t.Fatalf("stats %+v %v", st, err)
	}
	select {
	case err := <-errs:
		var je *json.UnsupportedTypeError
		if !errors.As(err, &je) {
			t.Fatalf("ErrHandler got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ErrHandler not called")
	}
}

// Requests dropped because an endpoint's queue was full are reported to
// ErrHandler as a slow consumer when the endpoint catches up.
func TestSlowEndpointReportsDrops(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL(), conn.PendingLimits(2, 1<<20))
	client := connect(t, s.URL())
	errs := make(chan error, 8)
	svc := addService(t, nc, micro.Config{
		Name: "slow", Version: "1.0.0",
		ErrHandler: func(_ *micro.Service, err error) { errs <- err },
	})
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	if err := svc.AddEndpoint("slow", micro.HandlerFunc(func(r micro.Request) {
		select {
		case entered <- struct{}{}:
			<-release // the first request blocks the endpoint
		default:
		}
	})); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := client.Publish("slow", nil); err != nil {
			t.Fatal(err)
		}
	}
	<-entered
	eventually(t, "requests to be dropped", func() bool { return nc.Stats().Dropped > 0 })
	close(release)
	select {
	case err := <-errs:
		if !errors.Is(err, conn.ErrSlowConsumer) {
			t.Fatalf("ErrHandler got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("drops not reported")
	}
	// Every request was either handled or dropped.
	eventually(t, "the queued requests to be handled", func() bool {
		return svc.Stats().Endpoints[0].NumRequests+nc.Stats().Dropped == 10
	})
}

// An error description with CR, LF and other control bytes (text from
// untrusted input, say) reaches the requester with those bytes as
// spaces, instead of failing to send (ErrBadHeader) and leaving the
// requester to time out; nothing can inject a header of its own.
func TestErrorDescriptionSanitised(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	svc := addService(t, nc, micro.Config{Name: "sanitised", Version: "1.0.0"})
	sent := make(chan error, 1)
	err := svc.AddEndpoint("fail", micro.HandlerFunc(func(r micro.Request) {
		sent <- r.Error("500", "bad\r\nInjected: yes\n\x1b]52;c;AAAA\x07\x00end\x7f", nil)
	}))
	if err != nil {
		t.Fatal(err)
	}
	m, err := nc.Request(ctxT(t), "fail", nil)
	if err != nil {
		t.Fatalf("request: %v (Error sent: %v)", err, <-sent)
	}
	if err := <-sent; err != nil {
		t.Fatalf("Error: %v", err)
	}
	var se *micro.ServiceError
	if !errors.As(micro.ResponseError(m), &se) {
		t.Fatalf("no service error in the reply (header %v)", m.Header.Block())
	}
	const want = "bad  Injected: yes  ]52;c;AAAA  end"
	if se.Code != "500" || se.Description != want {
		t.Fatalf("service error %q %q, want 500 %q", se.Code, se.Description, want)
	}
	if _, ok := m.Header.Lookup("Injected"); ok {
		t.Fatal("the description injected a header")
	}
	st := svc.Stats().Endpoints[0]
	if st.NumErrors != 1 || st.LastError != "500:bad  Injected: yes  ]52;c;AAAA  end " {
		t.Fatalf("errors %d, last %q", st.NumErrors, st.LastError)
	}
}
