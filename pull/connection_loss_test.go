package pull_test

// A consume loop across the loss of its connection: it keeps receiving
// after quick reconnects with no missed heartbeat reported, and it ends
// with conn.ErrClosed when the connection is closed or gives up. The tests
// of bugs reported against other clients carry the issue in their name
// (docs/reliability.md).

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pull"
)

// nats.go PR#1643 / #1729: quick reconnects under Messages report no missed
// heartbeat, and the consumer keeps receiving after each one.
func TestRegressionNatsGo1729ConsumerReceivesAfterReconnect(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	var missed atomic.Int32
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	got := make(chan uint64, 100)
	done := make(chan error, 1)
	go func() {
		for m, err := range c.Messages(ctx, pull.Heartbeat(200*time.Millisecond), pull.Expires(2*time.Second),
			pull.OnError(func(err error) {
				if errors.Is(err, pull.ErrNoHeartbeat) {
					missed.Add(1)
				}
			})) {
			if err != nil {
				done <- err
				return
			}
			md, _ := m.Metadata()
			m.Ack()
			got <- md.StreamSeq
		}
		done <- nil
	}()
	for round := range 4 {
		e.publish(t, 1)
		select {
		case seq := <-got:
			if seq != uint64(round+1) {
				t.Fatalf("round %d: got stream seq %d", round, seq)
			}
		case err := <-done:
			t.Fatalf("round %d: Messages ended: %v", round, err)
		case <-ctx.Done():
			t.Fatalf("round %d: nothing received after the reconnect", round)
		}
		if round < 3 {
			nc := e.nc
			before := nc.Stats().Reconnects
			nc.ForceReconnect()
			deadline := time.Now().Add(10 * time.Second)
			for !(nc.IsConnected() && nc.Stats().Reconnects > before) {
				if time.Now().After(deadline) {
					t.Fatal("no reconnect")
				}
				time.Sleep(2 * time.Millisecond) // polling, not synchronisation
			}
		}
	}
	cancel()
	<-done
	if n := missed.Load(); n != 0 {
		t.Fatalf("%d false missed-heartbeat reports across quick reconnects", n)
	}
}

// nats.go#1875: Messages blocked waiting must end, with conn.ErrClosed,
// when the connection is closed or gives up reconnecting.
func TestRegressionNatsGo1875MessagesEndsWhenConnectionCloses(t *testing.T) {
	for _, tc := range []string{"closed", "max reconnects exceeded"} {
		t.Run(tc, func(t *testing.T) {
			s := natstest.NewServer(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			nc, err := conn.Connect(ctx, s.URL(), conn.MaxReconnects(2),
				conn.ReconnectBackoff(10*time.Millisecond, 20*time.Millisecond), conn.ReconnectJitter(5*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			js, _ := jsapi.New(nc)
			e := &env{s: s, nc: nc, js: js, ctx: ctx}
			if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: jsapi.StorageMemory}); err != nil {
				t.Fatal(err)
			}
			c := e.consumer(t, jsapi.ConsumerConfig{})
			e.publish(t, 1)
			first := make(chan struct{})
			done := make(chan error, 1)
			go func() {
				n := 0
				for m, err := range c.Messages(ctx, pull.Heartbeat(200*time.Millisecond), pull.Expires(time.Second)) {
					if err != nil {
						done <- err
						return
					}
					m.Ack()
					if n++; n == 1 {
						close(first)
					}
				}
				done <- nil
			}()
			select {
			case <-first:
			case <-ctx.Done():
				t.Fatal("nothing received")
			}
			if tc == "closed" {
				nc.Close()
			} else {
				s.Shutdown()
			}
			select {
			case err := <-done:
				if !errors.Is(err, conn.ErrClosed) {
					t.Fatalf("Messages ended with %v, want conn.ErrClosed", err)
				}
			case <-ctx.Done():
				t.Fatal("Messages still blocked after the connection closed")
			}
		})
	}
}
