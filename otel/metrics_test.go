package natsotel_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/natsio/natsio/conn"
)

// collect reads every metric once.
func (k *kit) collect(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := k.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// has reports whether set holds every attribute of want.
func has(set attribute.Set, want map[string]string) bool {
	for k, v := range want {
		got, ok := set.Value(attribute.Key(k))
		if !ok || got.String() != v {
			return false
		}
	}
	return true
}

// intValue is the value of metric name's data point whose attributes
// include want (false when there is none).
func intValue(rm metricdata.ResourceMetrics, name string, want map[string]string) (int64, bool) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if has(p.Attributes, want) {
						return p.Value, true
					}
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					if has(p.Attributes, want) {
						return p.Value, true
					}
				}
			}
		}
	}
	return 0, false
}

// histCount is the number of values recorded in histogram name's data
// points whose attributes include want.
func histCount(rm metricdata.ResourceMetrics, name string, want map[string]string) uint64 {
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == name {
				for _, p := range h.DataPoints {
					if has(p.Attributes, want) {
						n += p.Count
					}
				}
			}
		}
	}
	return n
}

// The connection metrics are its Stats counters, read when collected: the
// same figures, slow-consumer drops included; the hooks add the duration
// of each publish and request.
func TestMetricsMatchStats(t *testing.T) {
	k := newKit(t, false)
	nc := k.srv.Connect(t, conn.Observe(k.inst), conn.PendingLimits(4, 1<<20))
	stop, err := k.inst.ObserveConn(nc)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := nc.SubscribeFunc("m.svc", func(m *conn.Msg) { _ = m.Respond([]byte("ok")) })
	if err != nil {
		t.Fatal(err)
	}
	slow, err := nc.Subscribe("m.slow") // never read: its queue of 4 overflows
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	const n = 10
	for range n {
		if err := nc.Publish("m.slow", []byte("0123456789")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := nc.Request(ctx(t), "m.svc", []byte("q")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := svc.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	<-svc.HandlerDone()
	if slow.Dropped() == 0 {
		t.Fatal("nothing dropped: the test needs a slow consumer")
	}
	if err := nc.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}

	rm := k.collect(t)
	st := nc.Stats()
	for _, c := range []struct {
		name string
		want uint64
	}{
		{"messaging.client.sent.messages", st.OutMsgs},
		{"messaging.client.consumed.messages", st.InMsgs},
		{"nats.client.sent.bytes", st.OutBytes},
		{"nats.client.received.bytes", st.InBytes},
		{"nats.client.reconnects", st.Reconnects},
		{"nats.client.messages.dropped", st.Dropped},
	} {
		got, ok := intValue(rm, c.name, map[string]string{"messaging.system": "nats"})
		if !ok || uint64(got) != c.want {
			t.Errorf("%s = %d (found %v), Stats says %d", c.name, got, ok, c.want)
		}
	}
	if st.Dropped == 0 || st.OutMsgs < n+2 {
		t.Fatalf("Stats %+v: the figures compared are not those of the test", st)
	}
	if got := histCount(rm, "messaging.client.operation.duration", map[string]string{"messaging.operation.name": "publish"}); got != n {
		t.Errorf("%d publish durations, want %d", got, n)
	}
	if got := histCount(rm, "messaging.client.operation.duration", map[string]string{"messaging.operation.name": "request"}); got != 1 {
		t.Errorf("%d request durations, want 1", got)
	}
	if got := histCount(rm, "messaging.process.duration", nil); got != 1 {
		t.Errorf("%d handler durations, want 1", got)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, ok := intValue(k.collect(t), "messaging.client.sent.messages", nil); ok {
		t.Error("the connection's counters are still reported after stop")
	}
}
