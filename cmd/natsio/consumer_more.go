package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/jsapi"
)

// parseUntil reads a pause end: an RFC 3339 time or a duration from now.
func parseUntil(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	d, err := parseDuration(v)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time nor a positive duration (examples: 1h, 2d, 2030-01-02T15:04:05Z)", v)
	}
	return time.Now().Add(d), nil
}

func (a *app) consumerPauseCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "pause STREAM NAME UNTIL",
		Short: "Stop a consumer's deliveries until a time",
		Long: `Pause the consumer NAME of STREAM until UNTIL, an RFC 3339 time or a
duration from now (server 2.11+). On a terminal it asks for confirmation
unless --force.`,
		Example: `  natsio consumer pause ORDERS worker 1h --force
  natsio consumer pause ORDERS worker 2030-01-02T15:04:05Z`,
		Args: exactArgs(3),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			stream, name := args[0], args[1]
			until, err := parseUntil(args[2])
			if err != nil {
				return usageError{err: err, cmd: c}
			}
			if !a.confirm(force, "Pause consumer %s > %s until %s?", stream, name, until.Local().Format(time.RFC3339)) {
				return userError{msg: "not paused", hint: "answer y, or pass --force"}
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			st, err := js.PauseConsumer(ctx, stream, name, until)
			if err != nil {
				return consumerErr(err, stream, name)
			}
			if a.json {
				return a.printJSON(st)
			}
			if !st.Paused {
				return userError{msg: fmt.Sprintf("consumer %s > %s was not paused", stream, name),
					hint: "pausing needs nats-server 2.11 or later, and an UNTIL in the future"}
			}
			fmt.Fprintf(a.stdout, "Paused %s > %s until %s (%s)\n", stream, name,
				st.PauseUntil.Local().Format("2006-01-02 15:04:05"), humanDuration(st.PauseRemaining.Round(time.Second), "0s"))
			return nil
		},
	}
	c.Flags().BoolVarP(&force, "force", "f", false, "do not ask for confirmation")
	return c
}

func (a *app) consumerResumeCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:     "resume STREAM NAME",
		Aliases: []string{"unpause"},
		Short:   "Resume a paused consumer",
		Example: `  natsio consumer resume ORDERS worker --force`,
		Args:    exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			stream, name := args[0], args[1]
			if !a.confirm(force, "Resume consumer %s > %s?", stream, name) {
				return userError{msg: "not resumed", hint: "answer y, or pass --force"}
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			st, err := js.ResumeConsumer(ctx, stream, name)
			if err != nil {
				return consumerErr(err, stream, name)
			}
			if a.json {
				return a.printJSON(st)
			}
			fmt.Fprintf(a.stdout, "Consumer %s > %s resumed\n", stream, name)
			return nil
		},
	}
	c.Flags().BoolVarP(&force, "force", "f", false, "do not ask for confirmation")
	return c
}

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
			var infos []*jsapi.ConsumerInfo
			for ci, err := range js.Consumers(ctx, stream) {
				if err != nil {
					return streamErr(err, stream)
				}
				infos = append(infos, ci)
			}
			slices.SortFunc(infos, func(x, y *jsapi.ConsumerInfo) int { return strings.Compare(x.Name, y.Name) })
			if a.json {
				return a.printJSON(nonNil(infos))
			}
			if len(infos) == 0 {
				fmt.Fprintf(a.stderr, "Stream %s has no consumers\n", stream)
				return nil
			}
			num := func(n uint64) string {
				if raw {
					return strconv.FormatUint(n, 10)
				}
				return commas(n)
			}
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
