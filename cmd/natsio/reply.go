package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/proto"
)

type replyFlags struct {
	queue   string
	count   int
	headers []string
	quiet   bool
}

func (a *app) replyCmd() *cobra.Command {
	var f replyFlags
	c := &cobra.Command{
		Use:   "reply SUBJECT [BODY]",
		Short: "Answer requests on a subject (a service responder)",
		Long: `Serve requests on SUBJECT: answer each with BODY, or echo the request back
when BODY is omitted, until --count requests were served or Ctrl-C. The body
is a template (see 'natsio pub --help'): {{Count}} is the request number and
{{Request}} the request's body. Responders join the queue group --queue, so
several of them share the load.

"Listening on SUBJECT" is printed on stderr once the server has registered
the subscription.`,
		Example: `  natsio reply svc.time '{{Time}}'
  natsio reply svc.echo                       # echo every request
  natsio reply svc.greet 'hello #{{Count}}, you said {{Request}}'
  natsio reply svc.once 'done' --count 1`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error { return a.runReply(c, args, &f) },
	}
	fl := c.Flags()
	fl.StringVarP(&f.queue, "queue", "q", "natsio-reply", "queue group the responder joins")
	fl.IntVarP(&f.count, "count", "c", 0, "exit after answering this many requests (0: until Ctrl-C)")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "header KEY:VALUE added to every reply (repeatable)")
	fl.BoolVar(&f.quiet, "quiet", false, "do not print the requests")
	return c
}

func (a *app) runReply(c *cobra.Command, args []string, f *replyFlags) error {
	ctx := c.Context()
	subject := args[0]
	if f.count < 0 {
		return usageError{err: fmt.Errorf("--count must not be negative, got %d", f.count), cmd: c}
	}
	if err := proto.ValidateSubscribeSubject(subject); err != nil {
		return badSubject(subject, false, err)
	}
	if err := proto.ValidateQueue(f.queue); err != nil {
		return usageError{err: fmt.Errorf("invalid queue group %q: %v", f.queue, trimPrefixes(err)), cmd: c}
	}
	h, err := parseHeaders(c, f.headers)
	if err != nil {
		return err
	}
	echo := len(args) < 2
	var bodyT *msgTemplate
	if !echo {
		if bodyT, err = newTemplate("body", args[1], true); err != nil {
			return usageError{err: err, cmd: c}
		}
	}

	nc, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	if bodyT != nil {
		bodyT.limit = int(min(nc.MaxPayload(), math.MaxInt32))
	}
	sub, err := nc.QueueSubscribe(subject, f.queue)
	if err != nil {
		return err
	}
	if f.count > 0 {
		if err := sub.AutoUnsubscribe(f.count); err != nil {
			return err
		}
	}
	if err := nc.Flush(ctx); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "Listening on %q in queue group %q\n", subject, f.queue)

	n := 0
	for m, err := range sub.Messages(ctx) {
		if err != nil {
			if ctx.Err() != nil { // Ctrl-C: a clean end
				break
			}
			return err
		}
		n++
		if !f.quiet {
			a.printMsg(n, m, false)
		}
		if m.Reply == "" {
			fmt.Fprintf(a.stderr, "request #%d on %q has no reply subject; not answered\n", n, m.Subject)
			continue
		}
		data := m.Data
		if !echo {
			bodyT.request = string(m.Data)
			if data, err = bodyT.render(n); err != nil {
				return err
			}
		}
		if err := m.RespondMsg(h, data); err != nil {
			return err
		}
	}
	dctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	nc.Drain(dctx)
	return nil
}
