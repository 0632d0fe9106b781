package sysapi_test

import (
	"context"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/sysapi"
)

// Ask every server for its health and one server for its connections.
func Example() {
	s, err := natstest.Start(natstest.SystemAccount(), natstest.Name("n1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, s.URL(), s.SystemConnectOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()

	sc, err := sysapi.New(nc)
	if err != nil {
		fmt.Println(err)
		return
	}
	health, err := sc.PingHealthz(ctx, sysapi.HealthzOptions{}, sysapi.Expect(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range health {
		fmt.Println(r.Server.Name, r.Data.Status)
	}
	connz, err := sc.Connz(ctx, health[0].Server.ID, sysapi.ConnzOptions{Auth: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range connz.Data.Conns {
		fmt.Println(c.AuthorizedUser, c.Account)
	}
	// Output:
	// n1 ok
	// sys SYS
}
