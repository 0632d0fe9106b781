package jsapi_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// exampleServer starts an embedded JetStream server for the examples.
func exampleServer() (url string, stop func()) {
	s, err := natstest.Start(natstest.JetStream(true))
	if err != nil {
		panic(err)
	}
	return s.URL(), s.Close
}

func Example() {
	url, stop := exampleServer()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, _ := conn.Connect(ctx, url)
	defer nc.Close()
	js, _ := jsapi.New(nc)

	st, err := js.CreateOrUpdateStream(ctx, jsapi.StreamConfig{
		Name:              "ORDERS",
		Subjects:          []string{"orders.>"},
		Storage:           jsapi.StorageMemory,
		DuplicateWindow:   time.Minute,
		AllowDirect:       true,
		AllowRollup:       true,
		MaxMsgsPerSubject: 10,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ack, _ := js.Publish(ctx, "orders.new", []byte(`{"id":1}`), jsapi.MsgID("order-1"))
	fmt.Println(ack.Stream, ack.Sequence, ack.Duplicate)

	// The same message ID again: stored once, acked as a duplicate.
	ack, _ = js.Publish(ctx, "orders.new", []byte(`{"id":1}`), jsapi.MsgID("order-1"))
	fmt.Println(ack.Stream, ack.Sequence, ack.Duplicate)

	// Optimistic concurrency: only if the subject's last sequence is still 1.
	_, err = js.Publish(ctx, "orders.new", []byte(`{"id":2}`), jsapi.ExpectLastSubjectSeq(5))
	fmt.Println(errors.Is(err, jsapi.ErrWrongLastSequence))

	m, _ := st.GetLastMsgForSubject(ctx, "orders.new")
	fmt.Println(m.Sequence, string(m.Data))
	// Output:
	// ORDERS 1 false
	// ORDERS 1 true
	// true
	// 1 {"id":1}
}

func ExampleJS_Publish_ttl() {
	url, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	nc, _ := conn.Connect(ctx, url)
	defer nc.Close()
	js, _ := jsapi.New(nc)

	js.CreateStream(ctx, jsapi.StreamConfig{Name: "SESSIONS", Subjects: []string{"session.>"}, AllowMsgTTL: true})
	ack, err := js.Publish(ctx, "session.42", []byte("token"), jsapi.TTL(30*time.Minute))
	fmt.Println(ack.Sequence, err)
	// Below a second is rejected before anything is sent.
	_, err = js.Publish(ctx, "session.42", []byte("token"), jsapi.TTL(time.Millisecond))
	fmt.Println(errors.Is(err, conn.ErrInvalidOption))
	// Output:
	// 1 <nil>
	// true
}
