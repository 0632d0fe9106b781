package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

type traceFlags struct {
	headers []string
	deliver bool
	stall   time.Duration
}

func (a *app) traceCmd() *cobra.Command {
	var f traceFlags
	c := &cobra.Command{
		Use:   "trace SUBJECT [BODY]",
		Short: "Trace the path of a message through the servers",
		Long: `Publish BODY (empty when omitted) to SUBJECT as a traced message and print
the report of every server it reaches (nats-server 2.11 or later): one block
per server, listing in order what happened to the message there:

  in  ingress: the connection it came from (kind, name, account, subject)
  sm  subject mapping: the subject it was mapped to
  se  stream export: the account and subject it was exported to
  si  service import: the account and subject it was imported into
  js  JetStream: the stream that stores it
  eg  egress: each client subscription (and queue group), route, gateway
      or leaf node it leaves the server to

Errors (permission denied, not stored…) are shown on the entry they belong
to. By default the message is only traced: the servers report where it would
go but deliver it to nobody and store it in no stream. --deliver delivers
(and stores) it as well, with its trace headers.

Reports are collected until none arrived for --stall after the last one,
within --timeout. --json prints the reports as a JSON array.`,
		Example: `  natsio trace orders.new                          # where would it go?
  natsio trace orders.new '{"id":1}' --deliver     # deliver it and show where it went
  natsio trace svc.echo hi -H Trace-Id:42 --stall 1s
  natsio trace orders.new --json | jq '.[].events'`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error { return a.runTrace(c, args, &f) },
	}
	fl := c.Flags()
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "header KEY:VALUE (repeatable)")
	fl.BoolVar(&f.deliver, "deliver", false, "deliver the message to its subscribers and streams too (default: trace only)")
	fl.DurationVar(&f.stall, "stall", conn.DefaultTraceStall, "stop collecting reports when none arrived for this long after the last one")
	return c
}

func (a *app) runTrace(c *cobra.Command, args []string, f *traceFlags) error {
	ctx := c.Context()
	subject := args[0]
	if f.stall <= 0 {
		return usageError{err: fmt.Errorf("--stall must be positive, got %v", f.stall), cmd: c}
	}
	if err := proto.ValidatePublishSubject(subject); err != nil {
		return badSubject(subject, true, err)
	}
	h, err := parseHeaders(c, f.headers)
	if err != nil {
		return err
	}
	if err := h.Validate(); err != nil {
		return usageError{err: fmt.Errorf("invalid --header: %s", trimPrefixes(err)), cmd: c}
	}
	var body []byte
	if len(args) == 2 {
		body = []byte(args[1])
	}

	nc, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()

	opts := []conn.TraceOpt{conn.TraceStall(f.stall), conn.TraceTimeout(a.conn.timeout)}
	if !f.deliver {
		opts = append(opts, conn.TraceOnly())
	}
	events, err := nc.Trace(ctx, subject, h, body, opts...)
	switch {
	case errors.Is(err, conn.ErrTraceUnsupported):
		return userError{msg: fmt.Sprintf("the server (nats-server %s) does not support message tracing", nc.ServerInfo().Version),
			hint: "message tracing needs nats-server 2.11 or later; nothing was sent", err: err}
	case errors.Is(err, conn.ErrTimeout):
		return userError{msg: fmt.Sprintf("no trace report for %q within %v", subject, a.conn.timeout),
			hint: "the server did not report on the message; raise --timeout, or check the server is healthy", err: err}
	case err != nil && len(events) == 0:
		return err
	}
	// A report that does not decode ends the collection: print the
	// reports before it, then the error.
	if a.json {
		if perr := a.printJSON(traceJSON(events)); perr != nil {
			return perr
		}
	} else {
		a.printTrace(events)
		what := "traced only, not delivered (--deliver to deliver it)"
		if f.deliver {
			what = "delivered as usual"
		}
		fmt.Fprintf(a.stderr, "Traced %q: %d server %s; the message was %s\n",
			subject, len(events), plural(len(events), "report", "reports"), what)
	}
	return err
}

// jsonTraceEvent is the --json form of a report: the event as decoded,
// with each entry as the server sent it (fields this client does not model
// included).
type jsonTraceEvent struct {
	*conn.TraceEvent
	Events []json.RawMessage `json:"events"`
}

func traceJSON(events []*conn.TraceEvent) []jsonTraceEvent {
	out := make([]jsonTraceEvent, 0, len(events))
	for _, ev := range events {
		je := jsonTraceEvent{TraceEvent: ev, Events: make([]json.RawMessage, 0, len(ev.Events))}
		for _, e := range ev.Events {
			raw := e.Raw
			if len(raw) == 0 {
				raw, _ = json.Marshal(e)
			}
			je.Events = append(je.Events, raw)
		}
		out = append(out, je)
	}
	return out
}

// printTrace prints one block per server report.
func (a *app) printTrace(events []*conn.TraceEvent) {
	for i, ev := range events {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		writeTraceEvent(a.stdout, ev)
	}
}

// writeTraceEvent writes a report: the server, then one line per entry.
func writeTraceEvent(w io.Writer, ev *conn.TraceEvent) {
	s := ev.Server
	var about []string
	if s.Version != "" {
		about = append(about, "version "+s.Version)
	}
	if s.Cluster != "" {
		about = append(about, "cluster "+s.Cluster)
	}
	if s.Domain != "" {
		about = append(about, "domain "+s.Domain)
	}
	if s.ID != "" && s.ID != s.Name {
		about = append(about, "id "+s.ID)
	}
	name := s.Name
	if name == "" {
		name = s.ID
	}
	fmt.Fprintf(w, "Server %s", name)
	if len(about) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(about, ", "))
	}
	fmt.Fprintln(w)
	if hop := ev.Request.Header[conn.HeaderTraceHop]; len(hop) > 0 {
		fmt.Fprintf(w, "  hop %s", hop[0])
		if ev.Hops > 0 {
			fmt.Fprintf(w, ", forwarded to %d more %s", ev.Hops, plural(ev.Hops, "server", "servers"))
		}
		fmt.Fprintln(w)
	} else if ev.Hops > 0 {
		fmt.Fprintf(w, "  forwarded to %d more %s\n", ev.Hops, plural(ev.Hops, "server", "servers"))
	}
	onward := false // it leaves the server or reaches a stream
	for i := range ev.Events {
		e := &ev.Events[i]
		onward = onward || e.Type == conn.TraceEgress || e.Type == conn.TraceJetStream
		fmt.Fprintf(w, "  %-3s %s\n", e.Type, traceEntryText(e))
	}
	if !onward {
		fmt.Fprintln(w, "  (no egress: no subscriber, route, gateway or leaf node receives it here)")
	}
}

// traceEntryText describes an entry by its key fields.
func traceEntryText(e *conn.TraceEntry) string {
	var parts []string
	add := func(label, v string) {
		if v != "" {
			parts = append(parts, label+" "+v)
		}
	}
	peer := func() {
		c := e.Kind.String()
		if e.Name != "" {
			c += " " + strconv.Quote(e.Name)
		}
		if e.CID != 0 {
			c += " cid " + strconv.FormatUint(e.CID, 10)
		}
		parts = append(parts, c)
	}
	switch e.Type {
	case conn.TraceIngress:
		peer()
		add("account", e.Account)
		add("subject", quoteIf(e.Subject))
	case conn.TraceSubjectMapping:
		add("mapped to", quoteIf(e.To))
	case conn.TraceStreamExport:
		add("exported to account", e.Account)
		add("subject", quoteIf(e.To))
	case conn.TraceServiceImport:
		add("imported into account", e.Account)
		add("from", quoteIf(e.From))
		add("to", quoteIf(e.To))
	case conn.TraceJetStream:
		add("stream", e.Stream)
		add("subject", quoteIf(e.StreamSubject))
		if e.NoInterest {
			parts = append(parts, "dropped: no interest")
		}
	case conn.TraceEgress:
		peer()
		add("account", e.Account)
		add("subscription", quoteIf(e.Subscription))
		add("queue", e.Queue)
		add("hop", e.Hop)
	default:
		if len(e.Raw) > 0 {
			parts = append(parts, string(e.Raw))
		}
	}
	if e.Error != "" {
		parts = append(parts, "error: "+e.Error)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// quoteIf quotes s when it is not empty.
func quoteIf(s string) string {
	if s == "" {
		return ""
	}
	return strconv.Quote(s)
}
