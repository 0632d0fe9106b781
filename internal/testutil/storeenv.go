package testutil

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// NewJSEnv starts an embedded JetStream server with opts and connects to
// it as JSEnvOn does.
func NewJSEnv(t testing.TB, opts ...natstest.Option) JSEnv {
	t.Helper()
	s := natstest.NewServer(t, opts...)
	return JSEnvOn(t, s, s.URL())
}

// NoLeak runs f with a JSEnv on s (a new server when nil) and, once f
// returns and the connection is closed, fails the test if a goroutine of
// natsio started since is still running after 10 s.
func NoLeak(t testing.TB, s *natstest.Server, f func(e JSEnv)) {
	t.Helper()
	if s == nil {
		s = natstest.NewServer(t)
	}
	before := leakcheck.Snapshot()
	e := JSEnvOn(t, s, s.URL())
	f(e)
	e.Conn.Close()
	leakcheck.Wait(t, before, 10*time.Second)
}

// APITotal is the count of JetStream API requests s has served.
func APITotal(t testing.TB, s *natstest.Server) uint64 {
	t.Helper()
	srv := s.Server()
	if srv == nil {
		t.Fatal("server not running")
	}
	info, err := srv.Jsz(&server.JSzOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return info.API.Total
}

// Collect ranges over seq and returns what it yields; an error ends the
// test.
func Collect[T any](t testing.TB, seq iter.Seq2[T, error]) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			t.Fatalf("after %d values: %v", len(out), err)
		}
		out = append(out, v)
	}
	return out
}

// Sorted is Collect, sorted.
func Sorted(t testing.TB, seq iter.Seq2[string, error]) []string {
	t.Helper()
	out := Collect(t, seq)
	slices.Sort(out)
	return out
}

// ReadUntil ranges over a kv or objstore watch until last(v) holds and
// returns what it read, each value as show puts it and the
// end-of-initial-values marker as "|", joined by spaces. An error ends
// the test.
func ReadUntil[E any](t testing.TB, seq iter.Seq2[*E, error], show func(*E) string, last func(*E) bool) string {
	t.Helper()
	var got []string
	for v, err := range seq {
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		if v == nil {
			got = append(got, "|")
			continue
		}
		got = append(got, show(v))
		if last(v) {
			break
		}
	}
	return strings.Join(got, " ")
}

// Watch steps through a kv or objstore watch run on its own goroutine.
type Watch[E any] struct {
	// T is the test the watch fails; a subtest may set its own.
	T      testing.TB
	ch     chan watchItem[E]
	cancel context.CancelFunc
	done   chan struct{}
}

type watchItem[E any] struct {
	v   *E
	err error
}

// StartWatch runs the watch mk returns for a context that Stop (or the
// test's end) cancels.
func StartWatch[E any](t testing.TB, mk func(ctx context.Context) iter.Seq2[*E, error]) *Watch[E] {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watch[E]{T: t, ch: make(chan watchItem[E], 1024), cancel: cancel, done: make(chan struct{})}
	seq := mk(ctx)
	go func() {
		defer close(w.done)
		defer close(w.ch)
		seq(func(v *E, err error) bool {
			select {
			case w.ch <- watchItem[E]{v, err}:
				return err == nil
			case <-ctx.Done():
				return false
			}
		})
	}()
	t.Cleanup(w.Stop)
	return w
}

// Next returns what the watch yields next, or false once it ended. It
// fails the test when nothing comes within 10 s.
func (w *Watch[E]) Next() (*E, error, bool) {
	select {
	case it, ok := <-w.ch:
		if !ok {
			return nil, nil, false
		}
		return it.v, it.err, true
	case <-time.After(10 * time.Second):
		w.T.Fatalf("watch: nothing within 10s")
		return nil, nil, false
	}
}

// Entry returns the next value, failing on errors, markers and the end.
func (w *Watch[E]) Entry() *E {
	w.T.Helper()
	v, err, ok := w.Next()
	if !ok || err != nil || v == nil {
		w.T.Fatalf("watch: want a value, got %v %v (open %v)", v, err, ok)
	}
	return v
}

// Marker expects the end-of-initial-values marker.
func (w *Watch[E]) Marker() {
	w.T.Helper()
	v, err, ok := w.Next()
	if !ok || err != nil || v != nil {
		w.T.Fatalf("watch: want the nil marker, got %+v %v (open %v)", v, err, ok)
	}
}

// Stop cancels the watch and waits for its goroutine to end.
func (w *Watch[E]) Stop() {
	w.cancel()
	<-w.done
}

// PublishStrays publishes body with h to reply, a pull inbox NextPull
// learnt, as the three kinds of message the server did not deliver: no
// reply subject, another client's inbox, and a $JS.ACK-like reply of
// stream that no ack parser takes. It returns how many it published.
func (s *PullSpy) PublishStrays(t testing.TB, reply, stream string, h *proto.Header, body []byte) int {
	t.Helper()
	return s.Publish(t, reply, body, []Forged{
		{Reply: "", Header: h},
		{Reply: "_INBOX.attacker", Header: h},
		{Reply: "JS.ACK." + stream + ".C.1.1.1.1700000000000000000.0", Header: h},
	}...)
}

// Refused runs call and fails the test unless it returns an error
// matching want with nothing sent on nc.
func Refused(t testing.TB, nc *conn.Conn, want error, call func() error) {
	t.Helper()
	before := nc.Stats().OutMsgs
	if err := call(); !errors.Is(err, want) {
		t.Fatalf("err = %v; want %v", err, want)
	}
	if n := nc.Stats().OutMsgs - before; n != 0 {
		t.Fatalf("%d messages sent", n)
	}
}

// Stores are the account-level calls of a kind of store kept in a stream
// (kv's buckets, objstore's stores), for CheckStores.
type Stores[H, S any] struct {
	Bind     func(ctx context.Context, js *jsapi.JS, name string) (H, error)
	Names    func(ctx context.Context, js *jsapi.JS) iter.Seq2[string, error]
	Statuses func(ctx context.Context, js *jsapi.JS) iter.Seq2[S, error]
	// Name is the store's name in a status.
	Name func(S) string
	// NotFound is the error of a missing store.
	NotFound error
}

// CheckStores fails the test unless want (sorted) are the account's stores
// of the kind: each binds, a missing one is NotFound, and Names and
// Statuses list exactly want.
func CheckStores[H, S any](t testing.TB, e JSEnv, k Stores[H, S], want ...string) {
	t.Helper()
	for _, name := range want {
		if _, err := k.Bind(e.Ctx, e.JS, name); err != nil {
			t.Fatalf("Bind(%s): %v", name, err)
		}
	}
	if _, err := k.Bind(e.Ctx, e.JS, "missing"); !errors.Is(err, k.NotFound) {
		t.Fatalf("Bind(missing): %v; want %v", err, k.NotFound)
	}
	if names := Sorted(t, k.Names(e.Ctx, e.JS)); !slices.Equal(names, want) {
		t.Fatalf("names %v; want %v", names, want)
	}
	var names []string
	for _, st := range Collect(t, k.Statuses(e.Ctx, e.JS)) {
		names = append(names, k.Name(st))
	}
	if slices.Sort(names); !slices.Equal(names, want) {
		t.Fatalf("statuses of %v; want %v", names, want)
	}
}

// CancelAfter ranges over the watch mk returns for a child of ctx and
// cancels that context after n yields (values and markers), so that the
// watch ends while it waits for updates; it returns when the watch ended.
func CancelAfter[E any](ctx context.Context, n int, mk func(ctx context.Context) iter.Seq2[*E, error]) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	i := 0
	for _, err := range mk(ctx) {
		if err != nil {
			return
		}
		if i++; i == n {
			cancel()
		}
	}
}
