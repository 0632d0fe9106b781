package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

type reqFlags struct {
	headers []string
	raw     bool
	replies int
	stall   time.Duration
	empty   bool
}

func (a *app) reqCmd() *cobra.Command {
	var f reqFlags
	c := &cobra.Command{
		Use:     "req SUBJECT [BODY]",
		Aliases: []string{"request"},
		Short:   "Send a request and print the reply (or replies)",
		Long: `Send BODY to SUBJECT as a request and print the first reply: its headers and
body on stdout, the round-trip time on stderr. Without BODY the body is read
from stdin. It waits up to --timeout; with nobody listening it fails at once
(no responders).

--replies N gathers up to N replies from every responder (scatter-gather),
each printed as above (--json: one JSON object per line); --replies 0 gathers
until --timeout passes. --wait-stall D ends the gathering once D passes
without a reply after the last one; --wait-for-empty ends it at a reply with
an empty body (the end marker of ADR-47 streams), which is not printed.
Reaching --timeout after at least one reply, or the end marker, is a normal
end (exit 0); with no reply at all it is an error.`,
		Example: `  natsio req svc.time ''
  natsio req svc.echo 'hello' --raw
  natsio req svc.echo 'hi' --header Trace-Id:42 --timeout 2s
  natsio req svc.echo 'hi' --json
  natsio req svc.ping '' --replies 3                     # the first 3 replies
  natsio req svc.ping '' --replies 0 --wait-stall 200ms  # all, until 200ms pass without one
  natsio req svc.list '' --replies 0 --wait-for-empty    # a streamed answer, up to its empty end marker`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error { return a.runReq(c, args, &f) },
	}
	fl := c.Flags()
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "header KEY:VALUE (repeatable)")
	fl.BoolVarP(&f.raw, "raw", "r", false, "print only the reply body")
	fl.IntVar(&f.replies, "replies", 1, "wait for this many replies (0: as many as arrive within --timeout or --wait-stall)")
	fl.DurationVar(&f.stall, "wait-stall", 0, "with --replies other than 1: stop when no reply arrives for this long after the last one")
	fl.BoolVar(&f.empty, "wait-for-empty", false, "with --replies other than 1: stop at a reply with an empty body (not printed)")
	return c
}

// parseHeaders turns KEY:VALUE flags into a header (nil when there are
// none).
func parseHeaders(c *cobra.Command, hs []string) (*proto.Header, error) {
	if len(hs) == 0 {
		return nil, nil
	}
	h := &proto.Header{}
	for _, s := range hs {
		k, v, ok := strings.Cut(s, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usageError{err: fmt.Errorf("--header %q is not KEY:VALUE", s), cmd: c}
		}
		h.Add(k, strings.TrimSpace(v))
	}
	return h, nil
}

func (a *app) runReq(c *cobra.Command, args []string, f *reqFlags) error {
	ctx := c.Context()
	subject := args[0]
	if f.replies < 0 {
		return usageError{err: fmt.Errorf("--replies must not be negative, got %d (0 gathers until --timeout or --wait-stall)", f.replies), cmd: c}
	}
	if f.stall < 0 {
		return usageError{err: fmt.Errorf("--wait-stall must not be negative, got %v", f.stall), cmd: c}
	}
	if f.stall > 0 && f.replies == 1 {
		return usageError{err: errors.New("--wait-stall needs --replies 0 or more than 1: a single reply ends the request"), cmd: c}
	}
	if f.empty && f.replies == 1 {
		return usageError{err: errors.New("--wait-for-empty needs --replies 0 or more than 1: a single reply ends the request"), cmd: c}
	}
	if err := proto.ValidatePublishSubject(subject); err != nil {
		return badSubject(subject, true, err)
	}
	h, err := parseHeaders(c, f.headers)
	if err != nil {
		return err
	}
	var body []byte
	if len(args) == 2 {
		body = []byte(args[1])
	} else {
		if stdinIsTerminal() {
			fmt.Fprintln(a.stderr, "reading the request body from stdin; end it with Ctrl-D")
		}
		if body, err = io.ReadAll(a.stdin); err != nil {
			return fmt.Errorf("reading the body from stdin: %w", err)
		}
	}
	nc, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()

	if f.replies != 1 {
		return a.requestMany(ctx, nc, subject, h, body, f)
	}
	start := time.Now()
	m, err := nc.RequestMsg(ctx, subject, h, body)
	if err != nil {
		return a.reqError(subject, err)
	}
	rtt := time.Since(start)
	if a.json {
		return a.printJSON(reqReply{newJSONMsg(m.Subject, m.Reply, &m.Header, m.Data), jsonDuration(rtt)})
	}
	a.printReply(m, rtt, 0, f.raw)
	return nil
}

// reqReply is the --json form of a reply: the message and the time from
// the request to it.
type reqReply struct {
	jsonMsg
	RTT jsonDuration `json:"rtt"`
}

// reqError explains a request that got no reply.
func (a *app) reqError(subject string, err error) error {
	switch {
	case errors.Is(err, conn.ErrNoResponders):
		return userError{msg: fmt.Sprintf("no responders on %q", subject),
			hint: fmt.Sprintf("nobody is listening there; start a responder with `natsio reply %s`", subject), err: err}
	case errors.Is(err, conn.ErrTimeout):
		return userError{msg: fmt.Sprintf("no reply on %q within %v", subject, a.conn.timeout),
			hint: "the responder is slow or gone; raise --timeout", err: err}
	}
	return err
}

// printReply prints a reply in text form: the headers and body on stdout,
// when it came on stderr. n numbers the replies of --replies (0: the only
// one).
func (a *app) printReply(m *conn.Msg, rtt time.Duration, n int, raw bool) {
	if raw {
		writeBody(a.stdout, m.Data)
		return
	}
	if n > 0 {
		fmt.Fprintf(a.stderr, "Received reply #%d on %q in %v\n", n, m.Subject, rtt.Round(time.Microsecond))
	} else {
		fmt.Fprintf(a.stderr, "Received a reply on %q in %v\n", m.Subject, rtt.Round(time.Microsecond))
	}
	writeHeaders(a.stdout, &m.Header)
	if !m.Header.IsZero() {
		fmt.Fprintln(a.stdout)
	}
	writeBody(a.stdout, m.Data)
}

// requestMany gathers the replies of --replies N (0: any number), printing
// each as it arrives. At least one reply is success: the gathering ends
// normally at N replies, after --wait-stall without one, or at --timeout.
func (a *app) requestMany(ctx context.Context, nc *conn.Conn, subject string, h *proto.Header, body []byte, f *reqFlags) error {
	opts := []conn.RequestManyOpt{conn.ManyTimeout(a.conn.timeout)}
	if f.replies > 0 {
		opts = append(opts, conn.ManyMax(f.replies))
	}
	if f.stall > 0 {
		opts = append(opts, conn.ManyStall(f.stall))
	}
	ended := false // the empty end marker came
	if f.empty {
		opts = append(opts, conn.ManySentinel(func(m *conn.Msg) bool {
			ended = len(m.Data) == 0
			return ended
		}))
	}
	start := time.Now()
	n := 0
	for m, err := range nc.RequestMany(ctx, subject, h, body, opts...) {
		if err != nil {
			if n > 0 && ctx.Err() != nil { // Ctrl-C after replies: a clean end
				fmt.Fprintf(a.stderr, "interrupted after %d replies\n", n)
				return nil
			}
			return a.reqError(subject, err)
		}
		n++
		rtt := time.Since(start)
		if a.json {
			if err := a.printJSONLine(reqReply{newJSONMsg(m.Subject, m.Reply, &m.Header, m.Data), jsonDuration(rtt)}); err != nil {
				return err
			}
			continue
		}
		a.printReply(m, rtt, n, f.raw)
	}
	if n == 0 && !ended { // the connection was drained meanwhile
		return a.reqError(subject, conn.ErrTimeout)
	}
	if !a.json && !f.raw {
		wanted := ""
		if f.replies > 0 && n < f.replies {
			wanted = fmt.Sprintf(" (wanted %d)", f.replies)
		}
		fmt.Fprintf(a.stderr, "Received %d %s in %v%s\n", n, plural(n, "reply", "replies"), time.Since(start).Round(time.Microsecond), wanted)
	}
	return nil
}

// plural returns one or many as n is 1 or not.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
