package pcgroup_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pcgroup"
	"github.com/natsio/natsio/pull"
)

// oracle checks what a group promises over all its instances: no key in
// two handlers at once, each key's messages handled in order (a message is
// never handled before every earlier one of its key was handled), and in
// the end every message handled. Handled means the handler did its work;
// whether its AckSync then succeeded is counted apart: an AckSync cut off
// by a kill can fail after the server took the acknowledgement.
type oracle struct {
	mu       sync.Mutex
	inFlight map[string]string       // key -> instance handling it
	done     map[string]map[int]bool // key -> n handled
	prefix   map[string]int          // key -> every n up to it handled
	dups     int
	bad      []string
	first    map[string]time.Time // instance -> first message handled
	count    map[string]int       // instance -> messages acknowledged
	progress chan struct{}
}

func newOracle() *oracle {
	return &oracle{inFlight: map[string]string{}, done: map[string]map[int]bool{}, prefix: map[string]int{},
		first: map[string]time.Time{}, count: map[string]int{}, progress: make(chan struct{}, 1)}
}

// skip marks n of key as not to be handled (a dead letter).
func (o *oracle) skip(key string, n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.complete(key, n)
}

// complete records n of key handled. o.mu is held.
func (o *oracle) complete(key string, n int) {
	if o.done[key] == nil {
		o.done[key] = map[int]bool{}
	}
	if o.done[key][n] {
		o.dups++
	}
	o.done[key][n] = true
	for o.done[key][o.prefix[key]+1] {
		o.prefix[key]++
	}
}

// handler returns the handler of one instance. Messages are "<key>:<n>",
// n counting from 1 per key.
func (o *oracle) handler(instance string, work time.Duration) pull.KeyedHandler {
	return func(ctx context.Context, m *jsapi.Msg) error {
		k, nStr, _ := strings.Cut(string(m.Data), ":")
		n, _ := strconv.Atoi(nStr)
		o.mu.Lock()
		if other, ok := o.inFlight[k]; ok {
			o.bad = append(o.bad, fmt.Sprintf("key %s: %s and %s at once", k, other, instance))
		}
		o.inFlight[k] = instance
		if n > o.prefix[k]+1 {
			o.bad = append(o.bad, fmt.Sprintf("key %s: %s handled %d before %d", k, instance, n, o.prefix[k]+1))
		}
		if _, ok := o.first[instance]; !ok {
			o.first[instance] = time.Now()
		}
		o.mu.Unlock()
		if work > 0 {
			time.Sleep(work)
		}
		o.mu.Lock()
		delete(o.inFlight, k)
		o.complete(k, n)
		o.mu.Unlock()
		err := m.AckSync(ctx)
		if err == nil {
			o.mu.Lock()
			o.count[instance]++
			o.mu.Unlock()
		}
		select {
		case o.progress <- struct{}{}:
		default:
		}
		return err
	}
}

// waitHandled waits until every key has 1…n handled.
func (o *oracle) waitHandled(t *testing.T, ctx context.Context, keys, n int) {
	t.Helper()
	for {
		o.mu.Lock()
		done := 0
		for k := range keys {
			if o.prefix["k"+strconv.Itoa(k)] >= n {
				done++
			}
		}
		o.mu.Unlock()
		if done == keys {
			return
		}
		select {
		case <-o.progress:
		case <-ctx.Done():
			o.mu.Lock()
			prefix := fmt.Sprint(o.prefix)
			o.mu.Unlock() // handlers still running take it
			t.Fatalf("not all handled: %d of %d keys done; handled up to %v", done, keys, prefix)
		}
	}
}

func (o *oracle) check(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, b := range o.bad[:min(len(o.bad), 10)] {
		t.Error(b)
	}
	if len(o.bad) > 10 {
		t.Errorf("… %d violations in all", len(o.bad))
	}
}

func (o *oracle) counts() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := map[string]int{}
	for k, v := range o.count {
		c[k] = v
	}
	return c
}

type gEnv struct {
	s   *natstest.Server
	js  *jsapi.JS
	ctx context.Context
}

func newGEnv(t *testing.T, opts ...natstest.Option) *gEnv {
	t.Helper()
	s := natstest.NewServer(t, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return &gEnv{s: s, js: newJS(t, s), ctx: ctx}
}

// newJS connects a client of its own (an application instance).
func newJS(t *testing.T, s *natstest.Server) *jsapi.JS {
	t.Helper()
	nc := s.Connect(t, conn.ReconnectBackoff(20*time.Millisecond, 200*time.Millisecond))
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// publish publishes messages "<key>:<n>" for n in [from, to] of keys
// k0…k<keys-1> on "<prefix>.k<i>", retrying across a server restart.
func (e *gEnv) publish(t *testing.T, prefix string, keys, from, to int) {
	t.Helper()
	for n := from; n <= to; n++ {
		for k := range keys {
			key := "k" + strconv.Itoa(k)
			id := jsapi.MsgID(key + ":" + strconv.Itoa(n))
			for {
				_, err := e.js.Publish(e.ctx, prefix+"."+key, []byte(key+":"+strconv.Itoa(n)), id)
				if err == nil {
					break
				}
				if e.ctx.Err() != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// soloGroup creates stream <name> on "<prefix>.*" and elastic group "g"
// over it (two partitions by the second token) with the one member "solo".
func (e *gEnv) soloGroup(t *testing.T, name, prefix string) {
	t.Helper()
	if _, err := e.js.CreateStream(e.ctx, jsapi.StreamConfig{Name: name, Subjects: []string{prefix + ".*"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.CreateElastic(e.ctx, e.js, name, "g", pcgroup.ElasticConfig{MaxMembers: 2, Members: []string{"solo"},
		PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: prefix + ".*", PartitioningWildcards: []int{1}}}}); err != nil {
		t.Fatal(err)
	}
}

// waitEmpty waits until the work-queue stream holds nothing: every message
// was acknowledged.
func (e *gEnv) waitEmpty(t *testing.T, stream string) {
	t.Helper()
	for {
		st, err := e.js.Stream(e.ctx, stream)
		if err == nil && st.CachedInfo().State.Msgs == 0 {
			return
		}
		select {
		case <-e.ctx.Done():
			t.Fatalf("stream %s not drained: %v %v", stream, err, st.CachedInfo().State)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
