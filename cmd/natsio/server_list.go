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

func (a *app) serverListCmd() *cobra.Command {
	var (
		sortBy           string
		reverse, compact bool
	)
	c := &cobra.Command{
		Use:     "list [expect]",
		Aliases: []string{"ls"},
		Short:   "List known servers",
		Long: `List every server that answers the server ping ($SYS.REQ.SERVER.PING): name,
cluster, host, version, JetStream, connections, subscriptions, routes,
gateways, memory, CPU, slow consumers, uptime and the round trip to each.
With [expect] it waits for that many servers (until --timeout) instead of
stopping when replies stall, and fails when fewer answer. Needs a user of the
system account.`,
		Example: `  natsio server list --user sys --password sys
  natsio server list 3 --sort conns --reverse
  natsio server list --json`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			return gatherCmd(a, c, args, pingStatsz, func(rs []*sysapi.Reply[sysapi.Statsz], _ int) error {
				sortStatsz(rs, sortBy, reverse)
				a.printServerList(rs, compact)
				return nil
			})
		},
	}
	fl := c.Flags()
	fl.Var(newEnum(&sortBy, "rtt", "name", "cluster", "conns", "conn", "subs", "sub", "routes", "route", "gw", "mem", "cpu", "slow", "uptime", "rtt"),
		"sort", "sort servers by name, cluster, conns, subs, routes, gw, mem, cpu, slow, uptime or rtt")
	fl.BoolVarP(&reverse, "reverse", "R", false, "reverse the sort")
	fl.BoolVar(&compact, "compact", true, "shorten server names by their common domain suffix")
	return c
}

// sortStatsz orders server ping replies as natscli's list does.
func sortStatsz(rs []*sysapi.Reply[sysapi.Statsz], by string, reverse bool) {
	key := func(x, y *sysapi.Reply[sysapi.Statsz]) int {
		switch by {
		case "name":
			return cmp.Compare(x.Server.Name, y.Server.Name)
		case "cluster":
			return cmp.Or(cmp.Compare(x.Server.Cluster, y.Server.Cluster), cmp.Compare(x.Server.Name, y.Server.Name))
		case "conns", "conn":
			return cmp.Compare(x.Data.Connections, y.Data.Connections)
		case "subs", "sub":
			return cmp.Compare(x.Data.NumSubs, y.Data.NumSubs)
		case "routes", "route":
			return cmp.Compare(len(x.Data.Routes), len(y.Data.Routes))
		case "gw":
			return cmp.Compare(len(x.Data.Gateways), len(y.Data.Gateways))
		case "mem":
			return cmp.Compare(x.Data.Mem, y.Data.Mem)
		case "cpu":
			return cmp.Compare(x.Data.CPU, y.Data.CPU)
		case "slow":
			return cmp.Compare(x.Data.SlowConsumers, y.Data.SlowConsumers)
		case "uptime":
			return y.Data.Start.Compare(x.Data.Start)
		}
		return cmp.Compare(x.Elapsed, y.Elapsed)
	}
	slices.SortStableFunc(rs, func(x, y *sysapi.Reply[sysapi.Statsz]) int {
		if reverse {
			return key(y, x)
		}
		return key(x, y)
	})
}

func (a *app) printServerList(rs []*sysapi.Reply[sysapi.Statsz], compact bool) {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Server.Name
	}
	if compact {
		names = compactNames(names)
	}
	var (
		rows                   [][]string
		conns, routes, gws, js int
		subs                   uint32
		mem, slow              int64
		clusters               = map[string]int{}
	)
	for i, r := range rs {
		d := r.Data
		rows = append(rows, []string{
			names[i], orDash(r.Server.Cluster), r.Server.Host, r.Server.Version, yesNo(r.Server.JetStream),
			commas(uint64(d.Connections)), commas(uint64(d.NumSubs)), strconv.Itoa(len(d.Routes)), strconv.Itoa(len(d.Gateways)),
			humanBytes(d.Mem), fmt.Sprintf("%.0f", d.CPU), strconv.Itoa(d.Cores), commas(uint64(d.SlowConsumers)),
			humanDuration(time.Since(d.Start).Round(time.Second), "-"), humanDuration(r.Elapsed.Round(10*time.Microsecond), "-"),
		})
		conns += d.Connections
		subs += d.NumSubs
		routes += len(d.Routes)
		gws += len(d.Gateways)
		mem += d.Mem
		slow += d.SlowConsumers
		if r.Server.JetStream {
			js++
		}
		if r.Server.Cluster != "" {
			clusters[r.Server.Cluster]++
		}
	}
	rows = append(rows, []string{
		strconv.Itoa(len(rs)), strconv.Itoa(len(clusters)), "", "", strconv.Itoa(js),
		commas(uint64(conns)), commas(uint64(subs)), strconv.Itoa(routes), strconv.Itoa(gws),
		humanBytes(mem), "", "", commas(uint64(slow)), "", "",
	})
	fmt.Fprintf(a.stdout, "Server Overview: %d servers\n\n", len(rs))
	a.fitTable([]string{"Name", "Cluster", "Host", "Version", "JS", "Conns", "Subs", "Routes", "GWs", "Mem", "CPU %", "Cores", "Slow", "Uptime", "RTT"}, rows)
}

// compactNames drops the domain suffix all names share ("n1.example.com",
// "n2.example.com" → "n1", "n2").
func compactNames(names []string) []string {
	if len(names) < 2 {
		return names
	}
	suffix := ""
	if i := strings.IndexByte(names[0], '.'); i >= 0 {
		suffix = names[0][i:]
	}
	for _, n := range names {
		if suffix == "" || !strings.HasSuffix(n, suffix) || n == suffix {
			return names
		}
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.TrimSuffix(n, suffix)
	}
	return out
}

func (a *app) serverInfoCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "info [server]",
		Aliases: []string{"i"},
		Short:   "Show information about a single server",
		Long: `Show a server's VARZ: identity, limits, JetStream, cluster, leaf nodes and
traffic. [server] is a server ID or name; without it, the server this
connection is on. Needs a user of the system account.`,
		Example: `  natsio server info --user sys --password sys
  natsio server info n2
  natsio server info NCXY... --json`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			nc, sc, err := a.sysClient(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			var r *sysapi.Reply[sysapi.Varz]
			switch {
			case len(args) == 0:
				r, err = sc.Varz(ctx, nc.ServerInfo().ServerID, sysapi.VarzOptions{})
			case isServerID(args[0]):
				r, err = sc.Varz(ctx, args[0], sysapi.VarzOptions{})
			default:
				var id string
				if id, err = serverIDByName(ctx, sc, args[0]); err != nil {
					return err
				}
				r, err = sc.Varz(ctx, id, sysapi.VarzOptions{})
			}
			if err != nil {
				return sysErr(err)
			}
			if a.json {
				return a.printJSON(r.Raw)
			}
			a.printVarz(r)
			return nil
		},
	}
	return c
}

// serverIDByName asks every server for its identity and returns the ID of
// the one named name.
func serverIDByName(ctx context.Context, sc *sysapi.Client, name string) (string, error) {
	rs, err := sc.PingIdz(ctx)
	if len(rs) == 0 && err != nil {
		return "", sysErr(err)
	}
	var names []string
	for _, r := range rs {
		if r.Data.Name == name {
			return r.Data.ID, nil
		}
		names = append(names, r.Data.Name)
	}
	slices.Sort(names)
	return "", userError{msg: fmt.Sprintf("no server is named %q", name),
		hint: "the servers that answered: " + strings.Join(names, ", ")}
}

// isServerID reports whether s looks like a server's ID: 56 upper-case
// base32 characters starting with N (a server nkey).
func isServerID(s string) bool {
	if len(s) != 56 || s[0] != 'N' {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '2' || r > '7') {
			return false
		}
	}
	return true
}

func (a *app) printVarz(r *sysapi.Reply[sysapi.Varz]) {
	v := r.Data
	id := &section{title: fmt.Sprintf("Server information for %s (%s)", v.Name, v.ID)}
	id.add("Version", v.Version)
	id.addIf("Git Commit", v.GitCommit)
	id.add("Go Version", v.GoVersion)
	id.add("Start Time", v.Start.Format(time.RFC3339))
	id.add("Uptime", v.Uptime)
	id.add("Listening", fmt.Sprintf("%s:%d", v.Host, v.Port))
	id.addIf("Cluster", r.Server.Cluster)
	id.addIf("Domain", r.Server.Domain)
	id.addIf("Tags", strings.Join(v.Tags, ", "))

	cn := &section{title: "Connection Settings"}
	cn.add("Auth Required", yesNo(v.AuthRequired))
	cn.add("TLS Required", yesNo(v.TLSRequired))
	cn.add("Maximum Connections", commas(uint64(v.MaxConn)))
	cn.add("Maximum Payload", humanBytes(v.MaxPayload))
	cn.add("Maximum Pending", humanBytes(v.MaxPending))
	cn.add("Ping Interval", humanDuration(v.PingInterval, "-"))
	cn.add("Maximum Pings Outstanding", strconv.Itoa(v.MaxPingsOut))
	cn.add("Write Deadline", humanDuration(v.WriteDeadline, "-"))

	js := &section{title: "JetStream"}
	if c := v.JetStream.Config; c != nil {
		js.addIf("Domain", c.Domain)
		js.add("Storage Directory", c.StoreDir)
		js.add("Max Memory", humanBytes(c.MaxMemory))
		js.add("Max File Store", humanBytes(c.MaxStore))
		if st := v.JetStream.Stats; st != nil {
			js.add("API Level", strconv.Itoa(st.API.Level))
			js.add("API Requests", commas(st.API.Total))
			js.add("API Errors", commas(st.API.Errors))
			js.add("Memory In Use", humanBytes(st.Memory))
			js.add("File In Use", humanBytes(st.Store))
		}
		if m := v.JetStream.Meta; m != nil {
			js.add("Meta Leader", orDash(m.Leader))
			js.add("Meta Cluster Size", strconv.Itoa(m.Size))
		}
	} else {
		js.add("Enabled", "no")
	}

	cl := &section{title: "Cluster"}
	if v.Cluster.Name != "" {
		cl.add("Name", v.Cluster.Name)
		cl.add("Listening", fmt.Sprintf("%s:%d", v.Cluster.Host, v.Cluster.Port))
		cl.add("Routes", strconv.Itoa(v.Routes))
		cl.addIf("Route URLs", strings.Join(v.Cluster.URLs, ", "))
	}
	lf := &section{title: "Leaf Nodes"}
	if v.LeafNode.Port != 0 || v.Leafs > 0 {
		if v.LeafNode.Port != 0 {
			lf.add("Listening", fmt.Sprintf("%s:%d", v.LeafNode.Host, v.LeafNode.Port))
		}
		lf.add("Connections", strconv.Itoa(v.Leafs))
	}

	st := &section{title: "Statistics"}
	st.add("CPU Cores", strconv.Itoa(v.Cores))
	st.add("CPU Usage", fmt.Sprintf("%.0f%%", v.CPU))
	st.add("Memory", humanBytes(v.Mem))
	st.add("Connections", commas(uint64(v.Connections)))
	st.add("Total Connections", commas(v.TotalConnections))
	st.add("Subscriptions", commas(uint64(v.Subscriptions)))
	st.add("Messages", fmt.Sprintf("%s in %s out", commas(uint64(v.InMsgs)), commas(uint64(v.OutMsgs))))
	st.add("Bytes", fmt.Sprintf("%s in %s out", humanBytes(v.InBytes), humanBytes(v.OutBytes)))
	st.add("Slow Consumers", commas(uint64(v.SlowConsumers)))
	a.sections(id, cn, js, cl, lf, st)
}

func (a *app) serverPingCmd() *cobra.Command {
	var graph, showID bool
	c := &cobra.Command{
		Use:   "ping [expect]",
		Short: "Ping all servers",
		Long: `Send the server ping ($SYS.REQ.SERVER.PING) and print each server that answers
with its round-trip time, then the statistics in milliseconds. With [expect]
it waits for that many servers (until --timeout) and reports the missing
ones. Needs a user of the system account.`,
		Example: `  natsio server ping --user sys --password sys
  natsio server ping 3 --id --graph`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			return gatherCmd(a, c, args, pingStatsz, func(rs []*sysapi.Reply[sysapi.Statsz], expect int) error {
				a.printPing(rs, showID, graph)
				if expect > len(rs) {
					fmt.Fprintf(a.stdout, "\nMissing %d server(s)\n", expect-len(rs))
				}
				return nil
			})
		},
	}
	c.Flags().BoolVar(&graph, "graph", false, "print how the round-trip times are distributed (25 ms buckets)")
	c.Flags().BoolVar(&showID, "id", false, "include the server ID in the output")
	return c
}

// pingStatsz sends the server ping.
func pingStatsz(ctx context.Context, sc *sysapi.Client, opts []sysapi.PingOpt) ([]*sysapi.Reply[sysapi.Statsz], error) {
	return sc.Ping(ctx, opts...)
}

// printPing prints each server's round trip and the statistics, as
// natscli's server ping does.
func (a *app) printPing(rs []*sysapi.Reply[sysapi.Statsz], showID, graph bool) {
	var ms []float64
	for _, r := range rs {
		ms = append(ms, float64(r.Elapsed.Microseconds())/1000)
		if showID {
			fmt.Fprintf(a.stdout, "%s %-60s rtt=%s\n", r.Server.ID, r.Server.Name, r.Elapsed.Round(time.Microsecond))
		} else {
			fmt.Fprintf(a.stdout, "%-60s rtt=%s\n", r.Server.Name, r.Elapsed.Round(time.Microsecond))
		}
	}
	fmt.Fprintln(a.stdout)
	fmt.Fprintln(a.stdout, "---- ping statistics ----")
	if len(ms) > 0 {
		fmt.Fprintf(a.stdout, "%d replies max: %.2f min: %.2f avg: %.2f\n", len(ms), slices.Max(ms), slices.Min(ms), avg(ms))
		if graph {
			fmt.Fprintln(a.stdout)
			a.pingChart(ms)
		}
	}
}

func avg(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// pingChart prints how many replies fell into each 25 ms bucket.
func (a *app) pingChart(ms []float64) {
	buckets := make([]int, int(slices.Max(ms)/25)+1)
	for _, m := range ms {
		buckets[int(m/25)]++
	}
	most := slices.Max(buckets)
	width := 40
	if w := a.termWidth(); w > 0 {
		width = max(10, min(width, w-20))
	}
	for i, n := range buckets {
		bar := strings.Repeat("#", (n*width+most-1)/most)
		fmt.Fprintf(a.stdout, "%4d-%-4d ms %4d %s\n", i*25, (i+1)*25, n, bar)
	}
}
