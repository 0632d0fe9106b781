package main

import (
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
}

func (a *app) reqCmd() *cobra.Command {
	var f reqFlags
	c := &cobra.Command{
		Use:     "req SUBJECT [BODY]",
		Aliases: []string{"request"},
		Short:   "Send a request and print the reply",
		Long: `Send BODY to SUBJECT as a request and print the first reply: its headers and
body on stdout, the round-trip time on stderr. Without BODY the body is read
from stdin. It waits up to --timeout; with nobody listening it fails at once
(no responders).`,
		Example: `  natsio req svc.time ''
  natsio req svc.echo 'hello' --raw
  natsio req svc.echo 'hi' --header Trace-Id:42 --timeout 2s
  natsio req svc.echo 'hi' --json`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error { return a.runReq(c, args, &f) },
	}
	fl := c.Flags()
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "header KEY:VALUE (repeatable)")
	fl.BoolVarP(&f.raw, "raw", "r", false, "print only the reply body")
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

	start := time.Now()
	m, err := nc.RequestMsg(ctx, subject, h, body)
	switch {
	case errors.Is(err, conn.ErrNoResponders):
		return userError{msg: fmt.Sprintf("no responders on %q", subject),
			hint: fmt.Sprintf("nobody is listening there; start a responder with `natsio reply %s`", subject), err: err}
	case errors.Is(err, conn.ErrTimeout):
		return userError{msg: fmt.Sprintf("no reply on %q within %v", subject, a.conn.timeout),
			hint: "the responder is slow or gone; raise --timeout", err: err}
	case err != nil:
		return err
	}
	rtt := time.Since(start)
	switch {
	case a.json:
		return a.printJSON(struct {
			jsonMsg
			RTT jsonDuration `json:"rtt"`
		}{newJSONMsg(m.Subject, m.Reply, m.Header, m.Data), jsonDuration(rtt)})
	case f.raw:
		writeBody(a.stdout, m.Data)
	default:
		fmt.Fprintf(a.stderr, "Received a reply on %q in %v\n", m.Subject, rtt.Round(time.Microsecond))
		writeHeaders(a.stdout, m.Header)
		if len(m.Header) > 0 {
			fmt.Fprintln(a.stdout)
		}
		writeBody(a.stdout, m.Data)
	}
	return nil
}
