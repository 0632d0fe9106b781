package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/proto"
)

type subFlags struct {
	queue  string
	count  int
	raw    bool
	stream string
	all    bool
	new    bool
	last   bool
	since  string
}

func (a *app) subCmd() *cobra.Command {
	var f subFlags
	c := &cobra.Command{
		Use:   "sub [SUBJECT]",
		Short: "Subscribe to a subject and print the messages",
		Long: `Subscribe to SUBJECT (wildcards allowed: * matches one token, > the rest)
and print every message with its subject, reply subject and headers, until
--count messages arrived or Ctrl-C. With --queue the subscription joins a
queue group: each message goes to one member. --raw prints the bodies only,
--json one JSON object per message.

"Listening on SUBJECT" is printed on stderr once the server has registered
the subscription.

With --stream the messages are read from a JetStream stream through an
ordered consumer: those it holds (--all, the default; --last for the
newest, --since for recent ones, --new for none) and then new ones; SUBJECT
is optional and filters them.`,
		Example: `  natsio sub 'orders.>'
  natsio sub orders.new --count 1 --raw
  natsio sub orders.new --queue workers
  natsio sub 'orders.*' --json | jq .data
  natsio sub --stream ORDERS --since 1h
  natsio sub orders.new --stream ORDERS --new`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			subject := ""
			if len(args) == 1 {
				subject = args[0]
			}
			if f.stream != "" {
				return a.runSubStream(c, subject, &f)
			}
			if subject == "" {
				return usageError{err: errors.New("give a SUBJECT, or --stream"), cmd: c}
			}
			return a.runSub(c, subject, &f)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.queue, "queue", "q", "", "queue group to join")
	fl.IntVarP(&f.count, "count", "c", 0, "exit after this many messages (0: until Ctrl-C)")
	fl.BoolVarP(&f.raw, "raw", "r", false, "print only the message bodies")
	fl.StringVar(&f.stream, "stream", "", "read from this JetStream stream (an ordered consumer)")
	fl.BoolVar(&f.all, "all", false, "with --stream: every stored message first (the default)")
	fl.BoolVar(&f.new, "new", false, "with --stream: only messages stored from now on")
	fl.BoolVar(&f.last, "last", false, "with --stream: the newest stored message first")
	fl.StringVar(&f.since, "since", "", "with --stream: messages stored this recently (a duration like 1h, or an RFC 3339 time)")
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

// runSubStream reads a stream through an ordered consumer.
func (a *app) runSubStream(c *cobra.Command, subject string, f *subFlags) error {
	ctx := c.Context()
	if f.queue != "" {
		return usageError{err: errors.New("--queue and --stream exclude each other"), cmd: c}
	}
	if f.count < 0 {
		return usageError{err: fmt.Errorf("--count must not be negative, got %d", f.count), cmd: c}
	}
	n := 0
	for _, b := range []bool{f.all, f.new, f.last, f.since != ""} {
		if b {
			n++
		}
	}
	if n > 1 {
		return usageError{err: errors.New("--all, --new, --last and --since exclude each other"), cmd: c}
	}
	cfg := ordered.Config{}
	if subject != "" {
		if err := proto.ValidateSubscribeSubject(subject); err != nil {
			return badSubject(subject, false, err)
		}
		cfg.FilterSubjects = []string{subject}
	}
	switch {
	case f.new:
		cfg.DeliverPolicy = jsapi.DeliverNew
	case f.last:
		cfg.DeliverPolicy = jsapi.DeliverLast
	case f.since != "":
		t, err := parseSince(f.since)
		if err != nil {
			return usageError{err: err, cmd: c}
		}
		cfg.DeliverPolicy, cfg.OptStartTime = jsapi.DeliverByStartTime, t
	}
	nc, oc, err := a.readStream(ctx, f.stream, cfg)
	if err != nil {
		return err
	}
	defer nc.Close()
	fmt.Fprintf(a.stderr, "Reading stream %s\n", f.stream)
	i := 0
	for m, err := range oc.Messages(ctx) {
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return streamErr(err, f.stream)
		}
		i++
		a.printMsg(i, &m.Msg, f.raw)
		if f.count > 0 && i >= f.count {
			break
		}
	}
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
