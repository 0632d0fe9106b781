package micro_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/micro"
)

// Discovery keeps a bounded number of replies: beyond DiscoverLimits the
// call returns the replies it kept with ErrDiscoverLimit.
func ExampleDiscoverLimits() {
	url, stop := exampleServer()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	for range 3 {
		svc, err := micro.AddService(nc, micro.Config{Name: "worker", Version: "1.0.0"})
		if err != nil {
			fmt.Println(err)
			return
		}
		defer svc.Stop(ctx)
	}
	if err := nc.Flush(ctx); err != nil {
		fmt.Println(err)
		return
	}

	pongs, err := micro.Ping(ctx, nc, "worker", micro.DiscoverLimits(2, 1<<20), micro.DiscoverStall(time.Second))
	fmt.Println(len(pongs), errors.Is(err, micro.ErrDiscoverLimit))
	// Output: 2 true
}
