package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/spf13/cobra"
)

func (a *app) consumerReportCmd() *cobra.Command {
	var raw bool
	c := &cobra.Command{
		Use:   "report STREAM",
		Short: "Report the state of every consumer of a stream",
		Long: `Print one row per consumer of STREAM: its kind, delivered and acknowledged
positions, pending and unacknowledged messages, redeliveries, waiting pulls
and whether it is paused. --raw prints plain numbers.`,
		Example: `  natsio consumer report ORDERS
  natsio consumer report ORDERS --json`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			stream := args[0]
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			infos, err := collect(js.Consumers(ctx, stream))
			if err != nil {
				return streamErr(err, stream)
			}
			slices.SortFunc(infos, func(x, y *jsapi.ConsumerInfo) int { return strings.Compare(x.Name, y.Name) })
			if a.json {
				return a.printJSON(nonNil(infos))
			}
			if len(infos) == 0 {
				fmt.Fprintf(a.stderr, "Stream %s has no consumers\n", stream)
				return nil
			}
			num, _ := numberFormats(raw)
			rows := make([][]string, 0, len(infos))
			for _, ci := range infos {
				kind := "pull"
				if ci.Config.DeliverSubject != "" {
					kind = "push"
				}
				if ci.Config.Durable == "" {
					kind += ", ephemeral"
				}
				paused := "no"
				if ci.Paused {
					paused = "for " + humanDuration(ci.PauseRemaining.Round(time.Second), "-")
				}
				rows = append(rows, []string{ci.Name, kind, string(orDefault(ci.Config.AckPolicy, jsapi.AckNone)),
					num(ci.Delivered.Stream), num(ci.AckFloor.Stream), num(ci.NumPending),
					num(uint64(ci.NumAckPending)), num(uint64(ci.NumRedelivered)), num(uint64(ci.NumWaiting)), paused})
			}
			a.table([]string{"CONSUMER", "KIND", "ACK", "DELIVERED", "ACK FLOOR", "PENDING", "UNACKED", "REDELIVERED", "WAITING", "PAUSED"}, rows)
			return nil
		},
	}
	c.Flags().BoolVarP(&raw, "raw", "r", false, "print plain numbers, without separators")
	return c
}
