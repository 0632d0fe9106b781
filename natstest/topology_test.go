package natstest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

func TestCluster(t *testing.T) {
	noLeaks(t)
	c := natstest.NewCluster(t, 3, natstest.ClusterName("orders"), natstest.UserPassword("u", "p"))
	if c.Len() != 3 || c.Name() != "orders" || len(c.URLs()) != 3 || strings.Count(c.URL(), ",") != 2 {
		t.Fatalf("Len %d Name %q URLs %v URL %q", c.Len(), c.Name(), c.URLs(), c.URL())
	}
	for i, s := range c.Nodes() {
		if c.Index(s) != i || c.Node(i) != s || s.ClusterPort() == 0 {
			t.Fatalf("node %d: index %d cluster port %d", i, c.Index(s), s.ClusterPort())
		}
		if name := s.Server().Name(); name != fmt.Sprintf("orders-%d", i) {
			t.Fatalf("node %d named %q", i, name)
		}
	}
	if c.MetaLeader() == nil {
		t.Fatal("no meta leader after NewCluster")
	}
	nc, err := conn.Connect(ctxT(t), c.URL(), append([]conn.Option{conn.UserInfo("u", "p")}, fastReconnect...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js := newJS(t, nc)
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "R3", Subjects: []string{"r3"}, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	old, err := c.WaitStreamLeader("R3")
	if err != nil {
		t.Fatal(err)
	}
	if c.AccountStreamLeader("$G", "R3") != old || c.StreamLeader("NONE") != nil {
		t.Fatal("AccountStreamLeader or StreamLeader of a missing stream")
	}
	if _, err := js.Publish(ctx, "r3", []byte("before")); err != nil {
		t.Fatal(err)
	}

	i, err := c.KillStreamLeader("R3")
	if err != nil || c.Node(i) != old || old.Running() {
		t.Fatalf("KillStreamLeader: %d %v (old leader %d running %v)", i, err, c.Index(old), old.Running())
	}
	leader, err := c.WaitStreamLeader("R3")
	if err != nil || leader == old {
		t.Fatalf("new leader %v: %v", leader, err)
	}
	publishEventually(t, js, "r3", "after")
	if err := c.Restart(i); err != nil {
		t.Fatal(err)
	}
	if !old.Running() {
		t.Fatal("the killed node is not back")
	}
	st, err := js.Stream(ctx, "R3")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(ctx); err != nil || info.State.Msgs != 2 {
		t.Fatalf("stream after a leader kill: %+v %v", info, err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, "R3", jsapi.ConsumerConfig{Durable: "d", AckPolicy: jsapi.AckExplicit}); err != nil {
		t.Fatal(err)
	}
	cl, err := c.WaitConsumerLeader("R3", "d")
	if err != nil || c.ConsumerLeader("R3", "d") != cl || c.ConsumerLeader("R3", "none") != nil {
		t.Fatalf("consumer leader %v: %v", cl, err)
	}
	meta, err := c.KillMetaLeader()
	if err != nil || c.Node(meta).Running() {
		t.Fatalf("KillMetaLeader: %d %v", meta, err)
	}
	if err := c.WaitReady(); err != nil {
		t.Fatalf("two of three nodes: %v", err)
	}
	if l := c.MetaLeader(); l == nil || c.Index(l) == meta {
		t.Fatal("no new meta leader")
	}
	if err := c.Restart(meta); err != nil {
		t.Fatal(err)
	}
	c.Kill(1)
	if c.Node(1).Running() {
		t.Fatal("Kill did not stop the node")
	}
}

// publishEventually publishes until the stream (electing a leader) stores
// the message.
func publishEventually(t testing.TB, js *jsapi.JS, subject, data string) {
	t.Helper()
	ctx := ctxT(t)
	var err error
	eventually(t, "a publish to be stored", func() bool {
		_, err = js.Publish(ctx, subject, []byte(data), jsapi.MsgID(data))
		return err == nil
	})
}

func TestClusterWithoutJetStream(t *testing.T) {
	noLeaks(t)
	c := natstest.NewCluster(t, 2, natstest.JetStream(false))
	a := c.Node(0).Connect(t)
	b := c.Node(1).Connect(t)
	ctx := ctxT(t)
	sub, _ := b.Subscribe("routed")
	b.Flush(ctx)
	// Interest crosses the route asynchronously.
	var got *conn.Msg
	eventually(t, "a message across the route", func() bool {
		a.Publish("routed", []byte("x"))
		short, cancel := contextWithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		got, _ = sub.NextMsg(short)
		return got != nil
	})
	if _, err := natstest.StartCluster(0); err == nil {
		t.Fatal("StartCluster(0) succeeded")
	}
}

func TestLeafNodeDomain(t *testing.T) {
	noLeaks(t)
	hub := natstest.NewServer(t, natstest.JetStreamDomain("hub"), natstest.LeafNodes())
	if hub.LeafNodePort() == 0 {
		t.Fatal("no leaf node port")
	}
	leaf := natstest.NewLeaf(t, hub, natstest.JetStreamDomain("leaf"))
	if hub.Server().NumLeafNodes() != 1 {
		t.Fatal("the hub sees no leaf node")
	}
	nc := leaf.Connect(t, fastReconnect...)
	ctx := ctxT(t)
	hubJS := newJS(t, nc, jsapi.Domain("hub"))
	if _, err := hubJS.CreateStream(ctx, jsapi.StreamConfig{Name: "CENTRAL", Subjects: []string{"central"}}); err != nil {
		t.Fatalf("a stream on the hub through the leaf: %v", err)
	}
	ack, err := hubJS.Publish(ctx, "central", []byte("x"))
	if err != nil || ack.Domain != "hub" {
		t.Fatalf("publish: %+v %v", ack, err)
	}
	local := newJS(t, nc)
	if _, err := local.Stream(ctx, "CENTRAL"); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("the leaf's own JetStream: %v, want stream not found", err)
	}
	// The leaf comes back to its hub after a restart, and so does the
	// hub's JetStream.
	if err := leaf.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the client on the leaf to reconnect", nc.IsConnected)
	if _, err := hubJS.Stream(ctx, "CENTRAL"); err != nil {
		t.Fatal(err)
	}

	plain := natstest.NewServer(t)
	if _, err := natstest.StartLeaf(plain); err == nil {
		t.Fatal("StartLeaf to a hub without LeafNodes succeeded")
	}
}
