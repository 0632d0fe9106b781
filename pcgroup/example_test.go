package pcgroup_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pcgroup"
)

// An elastic group of two members over the ORDERS stream, partitioned by
// customer (the second subject token): each customer's events are handled
// by one member, in order.
func Example() {
	s, err := natstest.Start()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc, _ := conn.Connect(ctx, s.URL())
	defer nc.Close()
	js, _ := jsapi.New(nc)
	js.CreateStream(ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.*.*"}})

	_, err = pcgroup.CreateElastic(ctx, js, "ORDERS", "billing", pcgroup.ElasticConfig{MaxMembers: 4,
		PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: "orders.*.*", PartitioningWildcards: []int{1}}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	pcgroup.AddMembers(ctx, js, "ORDERS", "billing", "m1", "m2")

	var mu sync.Mutex
	seen := map[string][]string{} // customer -> events, in the order handled
	owner := map[string]map[string]bool{}
	done := make(chan struct{})
	n := 0
	for _, name := range []string{"m1", "m2"} {
		m, err := pcgroup.Join(ctx, js, pcgroup.Elastic, "ORDERS", "billing", name, func(_ context.Context, msg *jsapi.Msg) error {
			tok := strings.Split(msg.Subject, ".") // orders.<customer>.<event>
			mu.Lock()
			defer mu.Unlock()
			seen[tok[1]] = append(seen[tok[1]], tok[2])
			if owner[tok[1]] == nil {
				owner[tok[1]] = map[string]bool{}
			}
			owner[tok[1]][name] = true
			if n++; n == 9 {
				close(done)
			}
			return nil
		}, pcgroup.MemberConfig{})
		if err != nil {
			fmt.Println(err)
			return
		}
		defer func() { m.Stop(); <-m.Done() }()
	}
	for _, ev := range []string{"created", "paid", "shipped"} {
		for _, c := range []string{"alice", "bob", "carol"} {
			js.Publish(ctx, "orders."+c+"."+ev, nil)
		}
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	for _, c := range slices.Sorted(maps.Keys(seen)) {
		fmt.Println(c, seen[c], "members:", len(owner[c]))
	}
	// Output:
	// alice [created paid shipped] members: 1
	// bob [created paid shipped] members: 1
	// carol [created paid shipped] members: 1
}
