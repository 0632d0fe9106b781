package micro_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/micro"
)

// discoveryFixture runs two instances of "alpha" and one of "beta", each
// on its own connection, and returns a client connection.
func discoveryFixture(t *testing.T) (client *conn.Conn, alpha []*micro.Service, beta *micro.Service) {
	t.Helper()
	s := startServer(t)
	for i := range 2 {
		nc := connect(t, s.URL())
		svc := addService(t, nc, micro.Config{
			Name: "alpha", Version: "1.2.3-rc.1+b7", Description: "first",
			Metadata: map[string]string{"zone": "eu", "n": string(rune('0' + i))},
		})
		if err := svc.AddGroup("alpha").AddEndpoint("get", echo(""),
			micro.EndpointMetadata(map[string]string{"kind": "read"})); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		alpha = append(alpha, svc)
	}
	nc := connect(t, s.URL())
	beta = addService(t, nc, micro.Config{Name: "beta", Version: "0.0.1", QueueGroup: "bq"})
	if err := beta.AddEndpoint("put", echo(""), micro.EndpointSubject("beta.put")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return connect(t, s.URL()), alpha, beta
}

// checkIdentity checks the standard fields of every ADR-32 response.
func checkIdentity(t *testing.T, v map[string]any, typ string, services map[string]*micro.Service) *micro.Service {
	t.Helper()
	if v["type"] != typ {
		t.Fatalf("type %v, want %s (%v)", v["type"], typ, v)
	}
	id, _ := v["id"].(string)
	svc := services[id]
	if svc == nil {
		t.Fatalf("reply from unknown id %v", v["id"])
	}
	if v["name"] != svc.Name() {
		t.Fatalf("name %v, want %s", v["name"], svc.Name())
	}
	want := svc.Info()
	if v["version"] != want.Version {
		t.Fatalf("version %v, want %s", v["version"], want.Version)
	}
	md, ok := v["metadata"].(map[string]any)
	if !ok || len(md) != len(want.Metadata) {
		t.Fatalf("metadata %#v, want %v", v["metadata"], want.Metadata)
	}
	for k, w := range want.Metadata {
		if md[k] != w {
			t.Fatalf("metadata[%s] = %v, want %s", k, md[k], w)
		}
	}
	return svc
}

func TestDiscoveryPingInfoStats(t *testing.T) {
	client, alpha, beta := discoveryFixture(t)
	services := map[string]*micro.Service{alpha[0].ID(): alpha[0], alpha[1].ID(): alpha[1], beta.ID(): beta}
	// A request so that stats are not all zero.
	request(t, client, "beta.put", "x")

	targets := []struct {
		suffix string
		want   int
	}{
		{"", 3},
		{".alpha", 2},
		{".beta", 1},
		{".alpha." + alpha[1].ID(), 1},
		{".beta." + beta.ID(), 1},
	}
	for _, tg := range targets {
		t.Run("PING"+tg.suffix, func(t *testing.T) {
			for _, v := range gatherRaw(t, client, "$SRV.PING"+tg.suffix, tg.want) {
				checkIdentity(t, v, "io.nats.micro.v1.ping_response", services)
				if len(v) != 5 {
					t.Fatalf("ping has fields %v, want type,name,id,version,metadata", keys(v))
				}
			}
		})
		t.Run("INFO"+tg.suffix, func(t *testing.T) {
			for _, v := range gatherRaw(t, client, "$SRV.INFO"+tg.suffix, tg.want) {
				svc := checkIdentity(t, v, "io.nats.micro.v1.info_response", services)
				want := svc.Info()
				if v["description"] != want.Description {
					t.Fatalf("description %v", v["description"])
				}
				eps, ok := v["endpoints"].([]any)
				if !ok || len(eps) != len(want.Endpoints) {
					t.Fatalf("endpoints %#v", v["endpoints"])
				}
				for i, e := range eps {
					ep := e.(map[string]any)
					w := want.Endpoints[i]
					if ep["name"] != w.Name || ep["subject"] != w.Subject || ep["queue_group"] != w.QueueGroup {
						t.Fatalf("endpoint %v, want %+v", ep, w)
					}
					md, ok := ep["metadata"].(map[string]any)
					if !ok || len(md) != len(w.Metadata) {
						t.Fatalf("endpoint metadata %#v", ep["metadata"])
					}
				}
			}
		})
		t.Run("STATS"+tg.suffix, func(t *testing.T) {
			for _, v := range gatherRaw(t, client, "$SRV.STATS"+tg.suffix, tg.want) {
				svc := checkIdentity(t, v, "io.nats.micro.v1.stats_response", services)
				started, ok := v["started"].(string)
				if !ok {
					t.Fatalf("started %#v", v["started"])
				}
				ts, err := time.Parse(time.RFC3339, started)
				if err != nil || ts.Location() != time.UTC || time.Since(ts) < 0 || time.Since(ts) > time.Minute {
					t.Fatalf("started %q: %v", started, err)
				}
				eps, ok := v["endpoints"].([]any)
				if !ok || len(eps) != 1 {
					t.Fatalf("endpoints %#v", v["endpoints"])
				}
				ep := eps[0].(map[string]any)
				for _, f := range []string{"num_requests", "num_errors", "processing_time", "average_processing_time"} {
					if _, ok := ep[f].(float64); !ok {
						t.Fatalf("%s = %#v, want a number", f, ep[f])
					}
				}
				if _, ok := ep["last_error"].(string); !ok {
					t.Fatalf("last_error = %#v", ep["last_error"])
				}
				if _, ok := ep["data"]; ok {
					t.Fatalf("data without a StatsHandler: %v", ep["data"])
				}
				w := svc.Info().Endpoints[0]
				if ep["name"] != w.Name || ep["subject"] != w.Subject || ep["queue_group"] != w.QueueGroup {
					t.Fatalf("endpoint %v, want %+v", ep, w)
				}
				wantReq := 0.0
				if svc == beta {
					wantReq = 1
				}
				if ep["num_requests"] != wantReq {
					t.Fatalf("num_requests %v, want %v", ep["num_requests"], wantReq)
				}
			}
		})
	}
}

// The client helpers gather typed responses for all, by name and by id.
func TestDiscoverHelpers(t *testing.T) {
	client, alpha, beta := discoveryFixture(t)
	ctx := ctxT(t)
	ids := func(ids ...string) []string { slices.Sort(ids); return ids }

	pings, err := micro.Ping(ctx, client, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pings {
		if p.Type != micro.PingResponseType {
			t.Fatalf("ping %+v", p)
		}
		got = append(got, p.ID)
	}
	slices.Sort(got)
	if want := ids(alpha[0].ID(), alpha[1].ID(), beta.ID()); !slices.Equal(got, want) {
		t.Fatalf("ping ids %v, want %v", got, want)
	}

	infos, err := micro.Infos(ctx, client, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].Name != "alpha" || infos[1].Name != "alpha" ||
		infos[0].Endpoints[0].Subject != "alpha.get" || infos[0].Endpoints[0].Metadata["kind"] != "read" {
		t.Fatalf("infos %+v", infos)
	}

	stats, err := micro.StatsOf(ctx, client, "beta", micro.DiscoverID(beta.ID()))
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 1 || stats[0].ID != beta.ID() || stats[0].Type != micro.StatsResponseType ||
		stats[0].Endpoints[0].QueueGroup != "bq" || stats[0].Started.IsZero() {
		t.Fatalf("stats %+v", stats)
	}

	// Nobody by that name: no reply, no error.
	none, err := micro.Ping(ctx, client, "gamma", micro.DiscoverStall(50*time.Millisecond))
	if err != nil || len(none) != 0 {
		t.Fatalf("ping gamma: %v %v", none, err)
	}
	if _, err := micro.Ping(ctx, client, "", micro.DiscoverID("x")); !errors.Is(err, micro.ErrInvalidConfig) {
		t.Fatalf("id without name: %v", err)
	}
	if _, err := micro.Ping(ctx, client, "bad name"); !errors.Is(err, micro.ErrInvalidName) {
		t.Fatalf("bad name: %v", err)
	}
	if _, err := micro.Ping(ctx, client, "alpha", micro.DiscoverStall(0)); !errors.Is(err, micro.ErrInvalidConfig) {
		t.Fatalf("zero stall: %v", err)
	}
}

// A reply of another type is reported as ErrBadResponse.
func TestDiscoverBadResponse(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	if _, err := nc.SubscribeFunc("$SRV.PING.fake", func(m *conn.Msg) {
		m.Respond([]byte(`{"type":"io.nats.micro.v1.info_response","name":"fake"}`))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.SubscribeFunc("$SRV.INFO.fake", func(m *conn.Msg) { m.Respond([]byte("not json")) }); err != nil {
		t.Fatal(err)
	}
	if _, err := micro.Ping(ctxT(t), nc, "fake"); !errors.Is(err, micro.ErrBadResponse) {
		t.Fatalf("wrong type: %v", err)
	}
	if _, err := micro.Infos(ctxT(t), nc, "fake"); !errors.Is(err, micro.ErrBadResponse) {
		t.Fatalf("not JSON: %v", err)
	}
}

// An endpoint added after the service started is in the next INFO.
func TestInfoReflectsLateEndpoint(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	svc := addService(t, nc, micro.Config{Name: "late", Version: "1.0.0"})
	infos, err := micro.Infos(ctxT(t), nc, "late", micro.DiscoverID(svc.ID()))
	if err != nil || len(infos) != 1 || len(infos[0].Endpoints) != 0 {
		t.Fatalf("infos %+v %v", infos, err)
	}
	if infos[0].Endpoints == nil {
		t.Fatal("endpoints encoded as null, want []")
	}
	if err := svc.AddEndpoint("new", echo("")); err != nil {
		t.Fatal(err)
	}
	infos, err = micro.Infos(ctxT(t), nc, "late", micro.DiscoverID(svc.ID()))
	if err != nil || len(infos) != 1 || len(infos[0].Endpoints) != 1 || infos[0].Endpoints[0].Name != "new" {
		t.Fatalf("infos %+v %v", infos, err)
	}
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
