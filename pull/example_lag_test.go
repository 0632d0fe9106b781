package pull_test

import (
	"context"
	"fmt"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// ExampleConsumer_Info_lag watches a consumer's lag: how much of the stream
// it has not been given yet (NumPending), how much it was given and has not
// acknowledged (NumAckPending), and how far it has got (Delivered and
// AckFloor, in stream sequences).
func ExampleConsumer_Info_lag() {
	_, js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for i := range 10 {
		if _, err := js.Publish(ctx, "orders.new", fmt.Appendf(nil, "order %d", i)); err != nil {
			fmt.Println(err)
			return
		}
	}
	info, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "billing"})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := pull.FromInfo(js, info)
	if err != nil {
		fmt.Println(err)
		return
	}
	msgs, err := c.Fetch(ctx, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range msgs[:3] { // the fourth is still being worked on
		if err := m.AckSync(ctx); err != nil {
			fmt.Println(err)
			return
		}
	}

	info, err = c.Info(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("not yet delivered:", info.NumPending)
	fmt.Println("delivered, not acknowledged:", info.NumAckPending)
	fmt.Println("last delivered stream sequence:", info.Delivered.Stream)
	fmt.Println("acknowledged up to stream sequence:", info.AckFloor.Stream)
	// Output:
	// not yet delivered: 6
	// delivered, not acknowledged: 1
	// last delivered stream sequence: 4
	// acknowledged up to stream sequence: 3
}
