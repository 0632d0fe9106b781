package micro_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/micro"
	"github.com/natsio/natsio/natstest"
)

// exampleServer starts an embedded server for the examples.
func exampleServer() (url string, stop func()) {
	s, err := natstest.Start(natstest.JetStream(false))
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
	nc, err := conn.Connect(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()

	stopped := make(chan string, 1)
	svc, err := micro.AddService(nc, micro.Config{
		Name:        "calc",
		Version:     "1.0.0",
		Description: "integer arithmetic",
		// Called once the last handler call has returned: after Stop, or
		// later on another goroutine when a call was still finishing.
		DoneHandler: func(s *micro.Service) { stopped <- s.Name() },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	math := svc.AddGroup("math")
	// "math.add": adds the space-separated integers of the request.
	err = math.AddEndpoint("add", micro.HandlerFunc(func(r micro.Request) {
		sum := 0
		for f := range strings.FieldsSeq(string(r.Data())) {
			n, err := strconv.Atoi(f)
			if err != nil {
				r.Error("400", "not an integer: "+f, nil)
				return
			}
			sum += n
		}
		r.Respond([]byte(strconv.Itoa(sum)))
	}))
	if err != nil {
		fmt.Println(err)
		return
	}

	reply, _ := nc.Request(ctx, "math.add", []byte("1 2 39"))
	fmt.Println("1+2+39 =", string(reply.Data))
	reply, _ = nc.Request(ctx, "math.add", []byte("1 two"))
	fmt.Println(micro.ResponseError(reply))

	// Discovery, as the nats CLI does it.
	infos, _ := micro.Infos(ctx, nc, "calc", micro.DiscoverID(svc.ID()))
	for _, ep := range infos[0].Endpoints {
		fmt.Printf("endpoint %s on %s, queue group %q\n", ep.Name, ep.Subject, ep.QueueGroup)
	}
	st := svc.Stats().Endpoints[0]
	fmt.Printf("requests %d, errors %d, last error %q\n", st.NumRequests, st.NumErrors, st.LastError)

	if err := svc.Stop(ctx); err != nil {
		fmt.Println(err)
	}
	fmt.Println("service", <-stopped, "stopped")
	_, err = nc.Request(ctx, "math.add", []byte("1"))
	fmt.Println(err)
	// Output:
	// 1+2+39 = 42
	// micro: service error 400: not an integer: two
	// endpoint add on math.add, queue group "q"
	// requests 2, errors 1, last error "400:not an integer: two"
	// service calc stopped
	// nats: no responders available for request
}

// A service answering discovery under a prefix of its own, and a client
// asking there.
func ExampleDiscoverPrefix() {
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

	svc, err := micro.AddService(nc, micro.Config{Name: "billing", Version: "2.1.0", Prefix: "finance.SRV"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Stop(ctx)

	pings, _ := micro.Ping(ctx, nc, "billing", micro.DiscoverPrefix("finance.SRV"))
	for _, p := range pings {
		fmt.Println("finance.SRV:", p.Name, p.Version)
	}
	pings, _ = micro.Ping(ctx, nc, "billing", micro.DiscoverStall(50*time.Millisecond))
	fmt.Println("$SRV:", len(pings), "answers")
	// Output:
	// finance.SRV: billing 2.1.0
	// $SRV: 0 answers
}
