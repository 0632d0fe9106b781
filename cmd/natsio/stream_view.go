package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

func (a *app) streamViewCmd() *cobra.Command {
	var (
		startID uint64
		since   string
		subject string
		raw     bool
	)
	c := &cobra.Command{
		Use:   "view STREAM [COUNT]",
		Short: "Print a stream's messages",
		Long: `Print COUNT messages (default 10) of STREAM from the first one, or from
sequence --id, or from those stored within --since, optionally only those on
--subject, with their sequence, time, subject and headers. --raw prints the
bodies only; --json one JSON object per message. It reads through an
ordered consumer and never changes the stream.`,
		Example: `  natsio stream view ORDERS
  natsio stream view ORDERS 100 --id 5000
  natsio stream view ORDERS --since 1h --subject orders.new --json`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			stream, count := args[0], 10
			if len(args) == 2 {
				n, err := strconv.Atoi(args[1])
				if err != nil || n < 1 {
					return usageError{err: fmt.Errorf("COUNT %q is not a positive number", args[1]), cmd: c}
				}
				count = n
			}
			if startID > 0 && since != "" {
				return usageError{err: errors.New("--id and --since exclude each other"), cmd: c}
			}
			cfg := ordered.Config{}
			if subject != "" {
				cfg.FilterSubjects = []string{subject}
			}
			switch {
			case startID > 0:
				cfg.DeliverPolicy, cfg.OptStartSeq = jsapi.DeliverByStartSequence, startID
			case since != "":
				t, err := parseSince(since)
				if err != nil {
					return usageError{err: err, cmd: c}
				}
				cfg.DeliverPolicy, cfg.OptStartTime = jsapi.DeliverByStartTime, t
			}
			nc, oc, err := a.readStream(ctx, stream, cfg)
			if err != nil {
				return err
			}
			defer nc.Close()
			n := 0
			for m, err := range oc.Messages(ctx, ordered.UntilDrained()) {
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return streamErr(err, stream)
				}
				md, _ := m.Metadata()
				n++
				switch {
				case a.json:
					jm := newJSONMsg(m.Subject, "", &m.Header, m.Data)
					jm.Sequence, jm.Time = md.StreamSeq, &md.Timestamp
					a.printJSONLine(jm)
				case raw:
					writeBody(a.stdout, m.Data)
				default:
					fmt.Fprintf(a.stdout, "[%d] %s subject %s\n", md.StreamSeq, md.Timestamp.Local().Format("2006-01-02 15:04:05"), m.Subject)
					writeHeaders(a.stdout, &m.Header)
					if !m.Header.IsZero() {
						fmt.Fprintln(a.stdout)
					}
					writeBody(a.stdout, m.Data)
					fmt.Fprintln(a.stdout)
				}
				if n >= count {
					break
				}
			}
			if n == 0 && !a.json {
				fmt.Fprintf(a.stderr, "No messages in stream %s to show\n", stream)
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.Uint64Var(&startID, "id", 0, "start at this stream sequence")
	fl.StringVar(&since, "since", "", "start at messages this recent (a duration like 1h, or an RFC 3339 time)")
	fl.StringVar(&subject, "subject", "", "only messages on this subject (wildcards allowed)")
	fl.BoolVarP(&raw, "raw", "r", false, "print only the bodies")
	return c
}

// parseSince reads a start time: a duration ago or an RFC 3339 time.
func parseSince(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	d, err := parseDuration(v)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("--since %q is neither a positive duration nor an RFC 3339 time", v)
	}
	return time.Now().Add(-d), nil
}

func (a *app) streamSubjectsCmd() *cobra.Command {
	var (
		sortBy  string
		reverse bool
		names   bool
	)
	c := &cobra.Command{
		Use:     "subjects STREAM [FILTER]",
		Aliases: []string{"subj"},
		Short:   "List a stream's subjects with their message counts",
		Example: `  natsio stream subjects ORDERS
  natsio stream subjects ORDERS 'orders.eu.>' --sort count --reverse
  natsio stream subjects ORDERS --names`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			stream, filter := args[0], ">"
			if len(args) == 2 {
				filter = args[1]
			}
			nc, _, s, err := a.bindStream(ctx, stream)
			if err != nil {
				return err
			}
			defer nc.Close()
			si, err := s.Info(ctx, jsapi.SubjectsFilter(filter))
			if err != nil {
				return streamErr(err, stream)
			}
			type subj struct {
				Subject string `json:"subject"`
				Count   uint64 `json:"messages"`
			}
			list := make([]subj, 0, len(si.State.Subjects))
			for k, v := range si.State.Subjects {
				list = append(list, subj{k, v})
			}
			slices.SortFunc(list, func(x, y subj) int {
				if sortBy == "count" {
					if c := cmp.Compare(x.Count, y.Count); c != 0 {
						return c
					}
				}
				return strings.Compare(x.Subject, y.Subject)
			})
			if reverse {
				slices.Reverse(list)
			}
			if a.json {
				if names {
					out := make([]string, 0, len(list))
					for _, x := range list {
						out = append(out, x.Subject)
					}
					return a.printJSON(out)
				}
				return a.printJSON(list)
			}
			if len(list) == 0 {
				fmt.Fprintf(a.stderr, "Stream %s has no messages on %q\n", stream, filter)
				return nil
			}
			if names {
				for _, x := range list {
					fmt.Fprintln(a.stdout, x.Subject)
				}
				return nil
			}
			rows := make([][]string, 0, len(list))
			for _, x := range list {
				rows = append(rows, []string{x.Subject, commas(x.Count)})
			}
			a.table([]string{"SUBJECT", "MESSAGES"}, rows)
			return nil
		},
	}
	fl := c.Flags()
	fl.Var(newEnum(&sortBy, "subject", "subject", "count"), "sort", "sort by subject or message count")
	fl.BoolVarP(&reverse, "reverse", "R", false, "reverse the order")
	fl.BoolVar(&names, "names", false, "list only the subjects")
	return c
}

// readStream connects and creates an ordered consumer on the stream; the
// caller closes the connection. A missing stream is a userError that says
// how to list or create streams.
func (a *app) readStream(ctx context.Context, stream string, cfg ordered.Config) (*conn.Conn, *ordered.Consumer, error) {
	nc, js, err := a.jetstream(ctx)
	if err != nil {
		return nil, nil, err
	}
	oc, err := ordered.New(ctx, js, stream, cfg)
	if err != nil {
		nc.Close()
		return nil, nil, streamErr(err, stream)
	}
	return nc, oc, nil
}
