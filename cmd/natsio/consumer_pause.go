package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
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
			if err := a.confirmed(force, "not paused", "Pause consumer %s > %s until %s?", stream, name, until.Local().Format(time.RFC3339)); err != nil {
				return err
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
			if err := a.confirmed(force, "not resumed", "Resume consumer %s > %s?", stream, name); err != nil {
				return err
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
