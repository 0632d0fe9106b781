package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

type subFlags struct {
	queue string
	count int
	raw   bool
}

func (a *app) subCmd() *cobra.Command {
	var f subFlags
	c := &cobra.Command{
		Use:   "sub SUBJECT",
		Short: "Subscribe to a subject and print the messages",
		Long: `Subscribe to SUBJECT (wildcards allowed: * matches one token, > the rest)
and print every message with its subject, reply subject and headers, until
--count messages arrived or Ctrl-C. With --queue the subscription joins a
queue group: each message goes to one member. --raw prints the bodies only,
--json one JSON object per message.

"Listening on SUBJECT" is printed on stderr once the server has registered
the subscription.`,
		Example: `  natsio sub 'orders.>'
  natsio sub orders.new --count 1 --raw
  natsio sub orders.new --queue workers
  natsio sub 'orders.*' --json | jq .data`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return a.runSub(c, args[0], &f) },
	}
	fl := c.Flags()
	fl.StringVarP(&f.queue, "queue", "q", "", "queue group to join")
	fl.IntVarP(&f.count, "count", "c", 0, "exit after this many messages (0: until Ctrl-C)")
	fl.BoolVarP(&f.raw, "raw", "r", false, "print only the message bodies")
	return c
}

func (a *app) runSub(c *cobra.Command, subject string, f *subFlags) error {
	ctx := c.Context()
	if f.count < 0 {
		return usageError{err: fmt.Errorf("--count must not be negative, got %d", f.count), cmd: c}
	}
	if err := proto.ValidateSubscribeSubject(subject); err != nil {
		return badSubject(subject, false, err)
	}
	if f.queue != "" {
		if err := proto.ValidateQueue(f.queue); err != nil {
			return usageError{err: fmt.Errorf("invalid queue group %q: %v", f.queue, trimPrefixes(err)), cmd: c}
		}
	}
	nc, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()

	var sub *conn.Subscription
	if f.queue != "" {
		sub, err = nc.QueueSubscribe(subject, f.queue)
	} else {
		sub, err = nc.Subscribe(subject)
	}
	if err != nil {
		return err
	}
	if f.count > 0 {
		if err := sub.AutoUnsubscribe(f.count); err != nil {
			return err
		}
	}
	// Once the server answered a PING sent after the SUB, it delivers
	// every message published from now on.
	if err := nc.Flush(ctx); err != nil {
		return err
	}
	if f.queue != "" {
		fmt.Fprintf(a.stderr, "Listening on %q in queue group %q\n", subject, f.queue)
	} else {
		fmt.Fprintf(a.stderr, "Listening on %q\n", subject)
	}

	n := 0
	for m, err := range sub.Messages(ctx) {
		if err != nil {
			if ctx.Err() != nil { // Ctrl-C: a clean end
				break
			}
			return err
		}
		n++
		a.printMsg(n, m, f.raw)
	}
	if f.count > 0 && n < f.count && ctx.Err() != nil {
		fmt.Fprintf(a.stderr, "interrupted after %d of %d messages\n", n, f.count)
	}
	dctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	nc.Drain(dctx)
	return nil
}

// printMsg prints message n of a subscription in the chosen format.
func (a *app) printMsg(n int, m *conn.Msg, raw bool) {
	switch {
	case a.json:
		a.printJSONLine(newJSONMsg(m.Subject, m.Reply, &m.Header, m.Data))
	case raw:
		writeBody(a.stdout, m.Data)
	default:
		if m.Reply != "" {
			fmt.Fprintf(a.stdout, "[#%d] Received on %q with reply %q\n", n, m.Subject, m.Reply)
		} else {
			fmt.Fprintf(a.stdout, "[#%d] Received on %q\n", n, m.Subject)
		}
		writeHeaders(a.stdout, &m.Header)
		if !m.Header.IsZero() {
			fmt.Fprintln(a.stdout)
		}
		writeBody(a.stdout, m.Data)
		fmt.Fprintln(a.stdout)
	}
}
