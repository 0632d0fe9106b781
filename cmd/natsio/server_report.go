package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/sysapi"
)

// reportFlags are the flags every `server report` command shares.
type reportFlags struct {
	filterFlags
	reverse bool
}

func (a *app) serverReportCmd() *cobra.Command {
	var f reportFlags
	c := group("report", "Report on various server metrics",
		`Reports gathered from every server through the system account: connections
and JetStream. --host, --cluster and --tags limit them to some servers.`,
		`  natsio server report connections --user sys --password sys
  natsio server report jetstream`,
		a.reportConnectionsCmd(&f), a.reportJetStreamCmd(&f))
	c.Aliases = []string{"rep"}
	pf := c.PersistentFlags()
	pf.BoolVarP(&f.reverse, "reverse", "R", false, "reverse the sort")
	pf.StringVar(&f.name, "host", "", "limit the report to the server with this name")
	pf.StringVar(&f.cluster, "cluster", "", "limit the report to this cluster")
	pf.StringSliceVar(&f.tags, "tags", nil, "limit the report to servers with these tags")
	return c
}

// serverConn is a connection with the server it is on.
type serverConn struct {
	server, cluster string
	*sysapi.ConnInfo
}

func (a *app) reportConnectionsCmd(f *reportFlags) *cobra.Command {
	var (
		account, sortBy, subject, user, state, reason string
		top                                           int
	)
	c := &cobra.Command{
		Use:     "connections [limit]",
		Aliases: []string{"conn", "connz", "conns"},
		Short:   "Report on connections",
		Long: `List the connections of every server (all pages of each server's CONNZ),
sorted by --sort, the --top ones. [limit] waits for that many servers.`,
		Example: `  natsio server report connections --sort in-msgs --top 10
  natsio server report connections --account APP --state all
  natsio server report connections --json`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if top < 1 {
				return usageError{err: fmt.Errorf("--top %d: must be at least 1", top), cmd: c}
			}
			o := sysapi.ConnzOptions{Filter: f.filter(), Auth: true, Account: account, User: user, FilterSubject: subject,
				State: map[string]sysapi.ConnState{"open": sysapi.ConnOpen, "closed": sysapi.ConnClosed, "all": sysapi.ConnAll}[state]}
			ask := func(ctx context.Context, sc *sysapi.Client, opts []sysapi.PingOpt) ([]*sysapi.Reply[sysapi.Connz], error) {
				return allConnz(ctx, sc, o, opts)
			}
			return gatherCmd(a, c, args, ask, func(pages []*sysapi.Reply[sysapi.Connz], _ int) error {
				var conns []serverConn
				for _, p := range pages {
					for _, ci := range p.Data.Conns {
						if reason == "" || strings.Contains(strings.ToLower(ci.Reason), strings.ToLower(reason)) {
							conns = append(conns, serverConn{p.Server.Name, p.Server.Cluster, ci})
						}
					}
				}
				sortConns(conns, sortBy, f.reverse)
				a.printConns(conns, top, sortBy, state != "open")
				return nil
			})
		},
	}
	fl := c.Flags()
	fl.StringVar(&account, "account", "", "limit the report to an account")
	fl.Var(newEnum(&sortBy, "subs", "in-bytes", "out-bytes", "in-msgs", "out-msgs", "uptime", "cid", "subs"),
		"sort", "sort by in-bytes, out-bytes, in-msgs, out-msgs, uptime, cid or subs")
	fl.IntVar(&top, "top", 1000, "show only the top connections")
	fl.StringVar(&subject, "subject", "", "only connections with interest in this subject")
	fl.StringVar(&user, "username", "", "only connections of this user")
	fl.Var(newEnum(&state, "open", "open", "closed", "all"), "state", "only connections in this state: open, closed or all")
	fl.StringVar(&reason, "closed-reason", "", "only closed connections whose reason contains this text")
	return c
}

// connzPage is how many connections one CONNZ reply carries.
const connzPage = 1024

// allConnz gathers every server's CONNZ and then the further pages of the
// servers that have more connections than one page.
func allConnz(ctx context.Context, sc *sysapi.Client, o sysapi.ConnzOptions, opts []sysapi.PingOpt) ([]*sysapi.Reply[sysapi.Connz], error) {
	o.Limit = connzPage
	first, err := sc.PingConnz(ctx, o, opts...)
	pages := first
	for _, p := range first {
		for off := p.Data.Offset + len(p.Data.Conns); off < p.Data.Total && len(p.Data.Conns) > 0; {
			next := o
			next.Filter = sysapi.Filter{}
			next.Offset = off
			r, perr := sc.Connz(ctx, p.Server.ID, next)
			if perr != nil {
				return pages, perr
			}
			if len(r.Data.Conns) == 0 {
				break
			}
			pages = append(pages, r)
			off += len(r.Data.Conns)
		}
	}
	return pages, err
}

func sortConns(cs []serverConn, by string, reverse bool) {
	key := func(x, y serverConn) int {
		switch by {
		case "in-bytes":
			return cmp.Compare(x.InBytes, y.InBytes)
		case "out-bytes":
			return cmp.Compare(x.OutBytes, y.OutBytes)
		case "in-msgs":
			return cmp.Compare(x.InMsgs, y.InMsgs)
		case "out-msgs":
			return cmp.Compare(x.OutMsgs, y.OutMsgs)
		case "uptime":
			return y.Start.Compare(x.Start)
		case "cid":
			return cmp.Compare(x.Cid, y.Cid)
		}
		return cmp.Compare(x.NumSubs, y.NumSubs)
	}
	// Largest first, as natscli's report: --reverse gives smallest first
	// (cid and uptime read oldest first, reversed newest first).
	slices.SortStableFunc(cs, func(x, y serverConn) int {
		if by == "cid" || by == "uptime" {
			x, y = y, x
		}
		if reverse {
			return key(x, y)
		}
		return key(y, x)
	})
}

func (a *app) printConns(cs []serverConn, top int, by string, withReason bool) {
	total := len(cs)
	if len(cs) > top {
		cs = cs[:top]
	}
	headers := []string{"CID", "Name", "Server", "Cluster", "IP", "Account", "Uptime", "In Msgs", "Out Msgs", "In Bytes", "Out Bytes", "Subs"}
	if withReason {
		headers = append(headers, "Reason")
	}
	var rows [][]string
	var inM, outM, inB, outB int64
	var subs uint32
	for _, c := range cs {
		row := []string{strconv.FormatUint(c.Cid, 10), orDash(c.Name), c.server, orDash(c.cluster),
			fmt.Sprintf("%s:%d", c.IP, c.Port), orDash(c.Account), orDash(c.Uptime),
			commas(uint64(c.InMsgs)), commas(uint64(c.OutMsgs)), humanBytes(c.InBytes), humanBytes(c.OutBytes),
			strconv.Itoa(int(c.NumSubs))}
		if withReason {
			row = append(row, orDash(c.Reason))
		}
		rows = append(rows, row)
		inM, outM, inB, outB, subs = inM+c.InMsgs, outM+c.OutMsgs, inB+c.InBytes, outB+c.OutBytes, subs+c.NumSubs
	}
	rows = append(rows, []string{"", "Totals for " + strconv.Itoa(len(cs)) + " connections", "", "", "", "", "",
		commas(uint64(inM)), commas(uint64(outM)), humanBytes(inB), humanBytes(outB), strconv.Itoa(int(subs))})
	fmt.Fprintf(a.stdout, "Top %d Connections out of %d by %s\n\n", len(cs), total, by)
	a.fitTable(headers, rows)
}

func (a *app) reportJetStreamCmd(f *reportFlags) *cobra.Command {
	var (
		account, sortBy  string
		compact, leaders bool
	)
	c := &cobra.Command{
		Use:     "jetstream [limit]",
		Aliases: []string{"jsz", "js"},
		Short:   "Report on JetStream activity",
		Long: `Per server: streams, consumers, messages, bytes, memory and file storage, API
requests and errors; then the JetStream meta group as its leader sees it.
[limit] waits for that many servers. --account reports one account.`,
		Example: `  natsio server report jetstream --user sys --password sys
  natsio server report jetstream --account APP --sort msgs
  natsio server report jetstream --json`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			o := sysapi.JszOptions{Filter: f.filter(), Account: account, Accounts: account != ""}
			ask := func(ctx context.Context, sc *sysapi.Client, opts []sysapi.PingOpt) ([]*sysapi.Reply[sysapi.Jsz], error) {
				return sc.PingJsz(ctx, o, opts...)
			}
			return gatherCmd(a, c, args, ask, func(rs []*sysapi.Reply[sysapi.Jsz], _ int) error {
				a.printJszReport(rs, account, sortBy, f.reverse, compact, leaders)
				return nil
			})
		},
	}
	fl := c.Flags()
	fl.StringVar(&account, "account", "", "report on this account only")
	fl.Var(newEnum(&sortBy, "cluster", "name", "cluster", "streams", "consumers", "msgs", "mbytes", "bytes", "mem", "file", "store", "api", "err"),
		"sort", "sort by name, cluster, streams, consumers, msgs, mbytes, mem, file, api or err")
	fl.BoolVar(&compact, "compact", true, "shorten server names by their common domain suffix")
	fl.BoolVarP(&leaders, "leaders", "l", false, "also show how many stream and consumer leaders each server has")
	return c
}

// jsRow is one server of the JetStream report.
type jsRow struct {
	name, cluster, domain  string
	streams, consumers     int
	msgs, bytes, mem, file uint64
	api, apiErr            uint64
	sLeaders, cLeaders     int
	disabled               bool
}

func (a *app) printJszReport(rs []*sysapi.Reply[sysapi.Jsz], account, by string, reverse, compact, leaders bool) {
	var rows []jsRow
	var meta *sysapi.MetaCluster
	for _, r := range rs {
		d := r.Data
		row := jsRow{name: r.Server.Name, cluster: r.Server.Cluster, domain: d.Config.Domain, disabled: d.Disabled,
			streams: d.Streams, consumers: d.Consumers, msgs: d.Messages, bytes: d.Bytes, mem: d.Memory, file: d.Store,
			api: d.API.Total, apiErr: d.API.Errors, sLeaders: d.StreamsLeader, cLeaders: d.ConsumersLeader}
		if account != "" {
			row.streams, row.consumers, row.msgs, row.bytes, row.mem, row.file = 0, 0, 0, 0, 0, 0
			for _, ad := range d.AccountDetails {
				if ad.Name == account || ad.ID == account {
					row.mem, row.file, row.bytes = ad.Memory, ad.Store, ad.Memory+ad.Store
					row.streams = len(ad.Streams)
					for _, s := range ad.Streams {
						row.msgs += s.State.Msgs
						row.consumers += s.State.Consumers
					}
				}
			}
		}
		rows = append(rows, row)
		if d.Meta != nil && len(d.Meta.Replicas) > 0 && d.Meta.Leader == r.Server.Name {
			meta = d.Meta
		}
	}
	key := func(x, y jsRow) int {
		switch by {
		case "name":
			return cmp.Compare(x.name, y.name)
		case "streams":
			return cmp.Compare(x.streams, y.streams)
		case "consumers":
			return cmp.Compare(x.consumers, y.consumers)
		case "msgs":
			return cmp.Compare(x.msgs, y.msgs)
		case "mbytes", "bytes":
			return cmp.Compare(x.bytes, y.bytes)
		case "mem":
			return cmp.Compare(x.mem, y.mem)
		case "file", "store":
			return cmp.Compare(x.file, y.file)
		case "api":
			return cmp.Compare(x.api, y.api)
		case "err":
			return cmp.Compare(x.apiErr, y.apiErr)
		}
		return cmp.Or(cmp.Compare(x.cluster, y.cluster), cmp.Compare(x.name, y.name))
	}
	slices.SortStableFunc(rows, func(x, y jsRow) int {
		if reverse {
			return key(y, x)
		}
		return key(x, y)
	})
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.name
	}
	if compact {
		names = compactNames(names)
	}
	headers := []string{"Server", "Cluster", "Domain", "Streams", "Consumers", "Messages", "Bytes", "Memory", "File", "API Req", "API Err"}
	if leaders {
		headers = append(headers, "Stream Leaders", "Consumer Leaders")
	}
	var table [][]string
	var t jsRow
	for i, r := range rows {
		name := names[i]
		if meta != nil && r.name == meta.Leader {
			name += "*"
		}
		if r.disabled {
			name += " (JetStream off)"
		}
		row := []string{name, orDash(r.cluster), orDash(r.domain), commas(uint64(r.streams)), commas(uint64(r.consumers)),
			commas(r.msgs), humanBytes(r.bytes), humanBytes(r.mem), humanBytes(r.file), commas(r.api), commas(r.apiErr)}
		if leaders {
			row = append(row, strconv.Itoa(r.sLeaders), strconv.Itoa(r.cLeaders))
		}
		table = append(table, row)
		t.streams, t.consumers, t.msgs, t.bytes, t.mem, t.file, t.api, t.apiErr =
			t.streams+r.streams, t.consumers+r.consumers, t.msgs+r.msgs, t.bytes+r.bytes, t.mem+r.mem, t.file+r.file, t.api+r.api, t.apiErr+r.apiErr
	}
	table = append(table, []string{"", "", "", commas(uint64(t.streams)), commas(uint64(t.consumers)), commas(t.msgs),
		humanBytes(t.bytes), humanBytes(t.mem), humanBytes(t.file), commas(t.api), commas(t.apiErr)})
	title := "JetStream Summary"
	if account != "" {
		title += " for account " + account
	}
	fmt.Fprintf(a.stdout, "%s\n\n", title)
	a.fitTable(headers, table)
	if meta == nil {
		return
	}
	fmt.Fprintf(a.stdout, "\nRAFT Meta Group Information\n\n")
	mrows := [][]string{{meta.Leader, meta.Peer, "yes", "yes", "yes", "0", "0"}}
	for _, p := range meta.Replicas {
		mrows = append(mrows, []string{p.Name, p.Peer, "", yesNo(p.Current), yesNo(!p.Offline),
			humanDuration(p.Active.Round(time.Millisecond), "0"), strconv.FormatUint(p.Lag, 10)})
	}
	slices.SortFunc(mrows, func(x, y []string) int { return cmp.Compare(x[0], y[0]) })
	a.fitTable([]string{"Name", "ID", "Leader", "Current", "Online", "Active", "Lag"}, mrows)
}
