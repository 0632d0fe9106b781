package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// rttResult is what `natsio rtt --json` prints.
type rttResult struct {
	Server     string       `json:"server"`
	Iterations int          `json:"iterations"`
	Min        jsonDuration `json:"min"`
	Avg        jsonDuration `json:"avg"`
	Max        jsonDuration `json:"max"`
}

func (a *app) rttCmd() *cobra.Command {
	var n int
	c := &cobra.Command{
		Use:   "rtt",
		Short: "Measure the round-trip time to the server",
		Long: `Connect, then time --iterations PING/PONG round trips to the server one
after the other (conn.Conn.RTT), and print the fastest, average and slowest.
Each round trip is bounded by --timeout.`,
		Example: `  natsio rtt
  natsio rtt --iterations 100 --json`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if n <= 0 {
				return usageError{err: fmt.Errorf("--iterations must be positive, got %d", n), cmd: c}
			}
			ctx := c.Context()
			nc, err := a.connect(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			res := rttResult{Server: nc.ConnectedURL(), Iterations: n}
			var sum time.Duration
			for i := range n {
				d, err := nc.RTT(ctx) // bounded by --timeout (the request timeout)
				if err != nil {
					return fmt.Errorf("round trip %d of %d: %w", i+1, n, err)
				}
				sum += d
				if i == 0 || d < time.Duration(res.Min) {
					res.Min = jsonDuration(d)
				}
				res.Max = jsonDuration(max(time.Duration(res.Max), d))
			}
			res.Avg = jsonDuration(sum / time.Duration(n))
			if a.json {
				return a.printJSON(res)
			}
			fmt.Fprintf(a.stdout, "%s: avg %v (min %v, max %v) over %d round trips\n",
				res.Server, time.Duration(res.Avg), time.Duration(res.Min), time.Duration(res.Max), n)
			return nil
		},
	}
	c.Flags().IntVarP(&n, "iterations", "n", 5, "round trips to make")
	return c
}
