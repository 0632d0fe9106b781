package conn_test

import (
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// HandlerDone follows the last return of a SubscribeFunc handler, which
// may come after the subscription has ended (Closed); without a handler
// goroutine it is Closed's channel.
func TestHandlerDone(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	entered := make(chan struct{})
	release := make(chan struct{})
	sub, err := nc.SubscribeFunc("hd", func(*conn.Msg) {
		close(entered)
		<-release
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("hd", nil); err != nil {
		t.Fatal(err)
	}
	<-entered
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub.Closed():
	case <-ctxT(t).Done():
		t.Fatal("Closed not closed after Unsubscribe")
	}
	select {
	case <-sub.HandlerDone():
		t.Fatal("HandlerDone closed while the handler runs")
	default:
	}
	close(release)
	select {
	case <-sub.HandlerDone():
	case <-ctxT(t).Done():
		t.Fatal("HandlerDone not closed after the handler returned")
	}

	plain, err := nc.Subscribe("hd.plain")
	if err != nil {
		t.Fatal(err)
	}
	if plain.HandlerDone() != plain.Closed() {
		t.Fatal("HandlerDone of a subscription without a handler is not Closed")
	}
}
