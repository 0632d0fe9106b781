package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/sysapi"
)

// exitStatus is the exit code of a command whose output already says how
// it ended (server check's Nagios codes).
type exitStatus int

func (e exitStatus) Error() string { return "exit status " + strconv.Itoa(int(e)) }

// addServerMonitoring adds the nats CLI's monitoring subcommands to
// `natsio server`, and `server run`, the embedded server by name.
func (a *app) addServerMonitoring(srv *cobra.Command) {
	var f serverFlags
	run := &cobra.Command{
		Use:   "run",
		Short: "Run an embedded NATS server with JetStream (what 'natsio server' alone does)",
		Long:  srv.Long,
		Example: `  natsio server run                              # nats://127.0.0.1:4222
  natsio server run --port 0 --store /tmp/js     # any free port, another store`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error { return a.runServer(c, &f) },
	}
	serverRunFlags(run, &f)
	srv.AddCommand(run, a.serverListCmd(), a.serverInfoCmd(), a.serverPingCmd(),
		a.serverReportCmd(), a.serverRequestCmd(), a.serverCheckCmd())
}

// sysClient connects and returns a monitoring client over the connection;
// the caller closes the connection.
func (a *app) sysClient(ctx context.Context) (*conn.Conn, *sysapi.Client, error) {
	nc, err := a.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	sc, err := sysapi.New(nc, sysapi.Timeout(a.conn.timeout))
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, sc, nil
}

// sysErr explains the monitoring API's errors.
func sysErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sysapi.ErrNoSystemAccount):
		return userError{msg: "no server answered the monitoring request: " + err.Error(),
			hint: "connect as a user of the system account (--user/--password, --creds or --context), with permission to publish to $SYS.REQ.>",
			err:  err}
	case errors.Is(err, sysapi.ErrUnknownServer):
		return userError{msg: "no server has that ID", hint: "run 'natsio server list' for the servers and their IDs", err: err}
	}
	return err
}

// expectArg parses the optional [expect] argument of list and ping.
func expectArg(c *cobra.Command, args []string, i int) (int, error) {
	if len(args) <= i {
		return 0, nil
	}
	n, err := strconv.ParseUint(args[i], 10, 31)
	if err != nil {
		return 0, usageError{err: fmt.Errorf("%q is not a number of servers", args[i]), cmd: c}
	}
	return int(n), nil
}

// gatherOpts is how many replies a command waits for: expect (0: until
// the replies stall).
func gatherOpts(expect int) []sysapi.PingOpt {
	if expect > 0 {
		return []sysapi.PingOpt{sysapi.Expect(expect)}
	}
	return nil
}

// incomplete reports, after the output, that fewer servers answered than
// expected; other errors stop the command.
func (a *app) incomplete(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sysapi.ErrIncomplete) {
		fmt.Fprintf(a.stderr, "natsio: %v\n", err)
		return exitStatus(exitError)
	}
	return sysErr(err)
}

// gatherCmd is the body of the commands that ask every server: it parses
// the optional [expect] argument, connects as a monitoring client, asks,
// and prints the replies with show (given the expected count), or as they were sent with --json; then
// it reports fewer replies than expected.
func gatherCmd[T any](a *app, c *cobra.Command, args []string,
	ask func(ctx context.Context, sc *sysapi.Client, opts []sysapi.PingOpt) ([]*sysapi.Reply[T], error),
	show func(rs []*sysapi.Reply[T], expect int) error) error {
	expect, err := expectArg(c, args, 0)
	if err != nil {
		return err
	}
	ctx := c.Context()
	nc, sc, err := a.sysClient(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	rs, gerr := ask(ctx, sc, gatherOpts(expect))
	if len(rs) == 0 && gerr != nil {
		return sysErr(gerr)
	}
	if a.json {
		err = rawList(a, rs)
	} else {
		err = show(rs, expect)
	}
	if err != nil {
		return err
	}
	return a.incomplete(gerr)
}

// rawList writes the raw replies as one JSON array (--json).
func rawList[T any](a *app, rs []*sysapi.Reply[T]) error {
	out := make([]json.RawMessage, len(rs))
	for i, r := range rs {
		out[i] = r.Raw
	}
	return a.printJSON(out)
}

// termWidth is the width tables fit in: the terminal's when stdout is
// one, else $COLUMNS when set, else 0 (no limit).
func (a *app) termWidth() int {
	if a.stdoutTerm {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// fitTable writes rows under headers as aligned columns that fit the
// terminal: while the table is too wide its widest column is cut, its
// cells ending in "…", down to minCol runes.
func (a *app) fitTable(headers []string, rows [][]string) {
	const gap, minCol = 2, 4
	widths := make([]int, len(headers))
	measure := func(r []string) {
		for i, cell := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCountInString(cell))
			}
		}
	}
	measure(headers)
	for _, r := range rows {
		measure(r)
	}
	if limit := a.termWidth(); limit > 0 {
		// Cut the widest column by one rune at a time, so that cuts spread
		// over the wide columns; a table that cannot fit even so wraps.
		total := gap * (len(widths) - 1)
		for _, w := range widths {
			total += w
		}
		for total > limit {
			widest := 0
			for i, w := range widths {
				if w > widths[widest] {
					widest = i
				}
			}
			if widths[widest] <= minCol {
				break
			}
			widths[widest]--
			total--
		}
	}
	line := func(r []string) {
		var b strings.Builder
		for i, w := range widths {
			cell := ""
			if i < len(r) {
				cell = cut(r[i], w)
			}
			b.WriteString(cell)
			if i < len(widths)-1 {
				b.WriteString(strings.Repeat(" ", w-utf8.RuneCountInString(cell)+gap))
			}
		}
		fmt.Fprintln(a.stdout, strings.TrimRight(b.String(), " "))
	}
	line(headers)
	for _, r := range rows {
		line(r)
	}
}

// cut shortens s to w runes, ending in "…" when cut.
func cut(s string, w int) string {
	if utf8.RuneCountInString(s) <= w {
		return s
	}
	r := []rune(s)
	return string(r[:w-1]) + "…"
}

// filterFlags are the flags that choose servers (report, request).
type filterFlags struct {
	name, host, cluster string
	tags                []string
}

func (f *filterFlags) filter() sysapi.Filter {
	return sysapi.Filter{Name: f.name, Host: f.host, Cluster: f.cluster, Tags: f.tags,
		ExactMatch: f.name != "" || f.host != "" || f.cluster != ""}
}
