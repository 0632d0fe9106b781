package main

import (
	"encoding/json"
	"maps"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/sysapi"
)

// requestFlags are the flags every `server request` command shares.
type requestFlags struct {
	filterFlags
	limit, offset int
	id            string
}

// requestKind is one `server request` subcommand: its names, the kind it
// asks for and how its flags make the request's options.
type requestKind struct {
	use     string
	aliases []string
	short   string
	kind    sysapi.Kind
	// flags adds the command's own flags and returns the function that
	// builds the options from them (nil: only the filter).
	flags func(c *cobra.Command) func(f *requestFlags) map[string]any
}

func (a *app) serverRequestCmd() *cobra.Command {
	var f requestFlags
	var subs []*cobra.Command
	for _, k := range requestKinds() {
		subs = append(subs, a.requestKindCmd(k, &f))
	}
	c := group("request", "Request monitoring data from the servers",
		`Send a monitoring request to every server (or those --name, --host,
--cluster and --tags select, or the one --id names) and print each reply as
one line of JSON, exactly as the server sent it. [wait] waits for that many
replies instead of stopping when they stall.`,
		`  natsio server request variables --user sys --password sys
  natsio server request connections 3 --filter-account APP
  natsio server request jetstream --accounts --streams --id NCXY...`,
		subs...)
	c.Aliases = []string{"req"}
	pf := c.PersistentFlags()
	pf.IntVar(&f.limit, "limit", 2048, "at most this many records per server (connections, subscriptions, jetstream)")
	pf.IntVar(&f.offset, "offset", 0, "start at this record")
	pf.StringVar(&f.name, "name", "", "only the server with this name")
	pf.StringVar(&f.host, "host", "", "only servers on this host")
	pf.StringVar(&f.cluster, "cluster", "", "only servers of this cluster")
	pf.StringSliceVar(&f.tags, "tags", nil, "only servers with these tags")
	pf.StringVar(&f.id, "id", "", "ask only the server with this ID ($SYS.REQ.SERVER.<id>.<KIND>)")
	return c
}

func (a *app) requestKindCmd(k requestKind, f *requestFlags) *cobra.Command {
	c := &cobra.Command{
		Use:     k.use + " [wait]",
		Aliases: k.aliases,
		Short:   k.short,
		Long:    k.short + " (" + string(k.kind) + "): one line of JSON per server, as the server sent it.",
		Example: "  natsio server request " + k.use + " --user sys --password sys\n" +
			"  natsio server request " + k.use + " 3 --cluster east   # wait for the 3 servers of cluster east",
		Args: rangeArgs(0, 1),
	}
	build := func(*requestFlags) map[string]any { return nil }
	if k.flags != nil {
		build = k.flags(c)
	}
	c.RunE = func(c *cobra.Command, args []string) error {
		expect, err := expectArg(c, args, 0)
		if err != nil {
			return err
		}
		body := map[string]any{}
		if fb, err := json.Marshal(f.filter()); err == nil {
			_ = json.Unmarshal(fb, &body)
		}
		maps.Copy(body, build(f))
		onlyConns := body[skipEmpty] == true
		delete(body, skipEmpty)
		nc, sc, err := a.sysClient(c.Context())
		if err != nil {
			return err
		}
		defer nc.Close()
		if f.id != "" {
			r, err := sc.Request(c.Context(), k.kind, f.id, body)
			if err != nil {
				return sysErr(err)
			}
			return a.printJSONLine(r.Raw)
		}
		rs, gerr := sc.PingRequest(c.Context(), k.kind, body, gatherOpts(expect)...)
		if len(rs) == 0 && gerr != nil {
			return sysErr(gerr)
		}
		for _, r := range rs {
			if onlyConns && !hasConns(r.Raw) {
				continue
			}
			if err := a.printJSONLine(r.Raw); err != nil {
				return err
			}
		}
		return a.incomplete(gerr)
	}
	return c
}

// skipEmpty marks, among a request's options, connections --filter-empty:
// it is not sent.
const skipEmpty = "\x00filter-empty"

// hasConns reports whether a CONNZ reply lists connections.
func hasConns(raw json.RawMessage) bool {
	var r struct {
		Data struct {
			N int `json:"num_connections"`
		} `json:"data"`
	}
	return json.Unmarshal(raw, &r) == nil && r.Data.N > 0
}

// paging is the --limit and --offset of the request group.
func paging(f *requestFlags, m map[string]any) map[string]any {
	m["limit"], m["offset"] = f.limit, f.offset
	return m
}

func requestKinds() []requestKind {
	return []requestKind{
		{use: "variables", aliases: []string{"var", "varz"}, short: "Show runtime variables", kind: sysapi.KindVarz},
		{use: "connections", aliases: []string{"conn", "connz"}, short: "Show connection details", kind: sysapi.KindConnz,
			flags: func(c *cobra.Command) func(*requestFlags) map[string]any {
				var sort, state, user, account, subject string
				var subs, nonEmpty bool
				var cid uint64
				fl := c.Flags()
				fl.Var(newEnum(&sort, "cid", "cid", "start", "subs", "pending", "msgs_to", "msgs_from", "bytes_to", "bytes_from", "last", "idle", "uptime", "stop", "reason", "rtt"), "sort", "sort by this property")
				fl.BoolVar(&subs, "subscriptions", false, "show subscriptions")
				fl.Uint64Var(&cid, "filter-cid", 0, "only the connection with this CID")
				fl.Var(newEnum(&state, "open", "open", "closed", "all"), "filter-state", "only connections in this state: open, closed or all")
				fl.StringVar(&user, "filter-user", "", "only connections of this user")
				fl.StringVar(&account, "filter-account", "", "only connections of this account")
				fl.StringVar(&subject, "filter-subject", "", "only connections with interest in this subject")
				fl.BoolVar(&nonEmpty, "filter-empty", false, "only show replies that have connections")
				return func(f *requestFlags) map[string]any {
					return paging(f, map[string]any{skipEmpty: nonEmpty, "sort": sort, "subscriptions": subs, "cid": cid, "auth": true,
						"state": map[string]int{"open": 0, "closed": 1, "all": 2}[state], "user": user, "acc": account, "filter_subject": subject})
				}
			}},
		{use: "routes", aliases: []string{"route", "routez"}, short: "Show route details", kind: sysapi.KindRoutez,
			flags: subscriptionsFlag("subscriptions")},
		{use: "gateways", aliases: []string{"gateway", "gwy", "gatewayz"}, short: "Show gateway details", kind: sysapi.KindGatewayz,
			flags: func(c *cobra.Command) func(*requestFlags) map[string]any {
				var name, account string
				var accounts, subs bool
				fl := c.Flags()
				fl.StringVar(&name, "filter-name", "", "only the gateway to this cluster")
				fl.StringVar(&account, "filter-account", "", "only this account in the account detail")
				fl.BoolVar(&accounts, "accounts", false, "show account detail")
				fl.BoolVar(&subs, "subscriptions", true, "show subscription detail")
				return func(*requestFlags) map[string]any {
					return map[string]any{"name": name, "account_name": account, "accounts": accounts || account != "", "subscriptions": subs}
				}
			}},
		{use: "leafnodes", aliases: []string{"leaf", "leafz"}, short: "Show leaf node details", kind: sysapi.KindLeafz,
			flags: subscriptionsFlag("subscriptions")},
		{use: "subscriptions", aliases: []string{"sub", "subsz"}, short: "Show subscription information", kind: sysapi.KindSubsz,
			flags: func(c *cobra.Command) func(*requestFlags) map[string]any {
				var detail bool
				var account, subject string
				fl := c.Flags()
				fl.BoolVar(&detail, "detail", false, "include every subscription")
				fl.StringVar(&account, "filter-account", "", "only this account")
				fl.StringVar(&subject, "filter-subject", "", "only subscriptions a message on this subject reaches")
				return func(f *requestFlags) map[string]any {
					return paging(f, map[string]any{"subscriptions": detail, "account": account, "test": subject})
				}
			}},
		{use: "accounts", aliases: []string{"accountz", "acct"}, short: "Show account details", kind: sysapi.KindAccountz,
			flags: func(c *cobra.Command) func(*requestFlags) map[string]any {
				var account string
				c.Flags().StringVar(&account, "account", "", "details of this account")
				return func(*requestFlags) map[string]any { return map[string]any{"account": account} }
			}},
		{use: "jetstream", aliases: []string{"jsz", "js"}, short: "Show JetStream details", kind: sysapi.KindJsz,
			flags: func(c *cobra.Command) func(*requestFlags) map[string]any {
				var account string
				var accounts, streams, consumer, config, raft, leader, streamLeader, all bool
				fl := c.Flags()
				fl.StringVar(&account, "account", "", "statistics of this account")
				fl.BoolVar(&accounts, "accounts", false, "include details about accounts")
				fl.BoolVar(&streams, "streams", false, "include details about streams")
				fl.BoolVar(&consumer, "consumer", false, "include details about consumers")
				fl.BoolVar(&config, "config", false, "include the configurations")
				fl.BoolVar(&raft, "raft", false, "include details about Raft groups")
				fl.BoolVar(&leader, "leader", false, "only the meta group leader answers")
				fl.BoolVar(&streamLeader, "stream-leader", false, "only stream leaders report their streams")
				fl.BoolVar(&all, "all", false, "include accounts, streams, consumers and configurations")
				return func(f *requestFlags) map[string]any {
					return paging(f, map[string]any{"account": account, "accounts": accounts || all, "streams": streams || all,
						"consumer": consumer || all, "config": config || all, "raft": raft, "leader_only": leader, "stream_leader_only": streamLeader})
				}
			}},
		{use: "jetstream-health", aliases: []string{"healthz"}, short: "Request JetStream health status", kind: sysapi.KindHealthz,
			flags: func(c *cobra.Command) func(*requestFlags) map[string]any {
				var jsEnabled, serverOnly, details bool
				var account, stream, consumer string
				fl := c.Flags()
				fl.BoolVarP(&jsEnabled, "js-enabled", "J", false, "check that JetStream is enabled on all servers")
				fl.BoolVarP(&serverOnly, "server-only", "S", false, "check the JetStream server only, not streams and consumers")
				fl.StringVar(&account, "account", "", "check only this account")
				fl.StringVar(&stream, "stream", "", "check only this stream")
				fl.StringVar(&consumer, "consumer", "", "check only this consumer")
				fl.BoolVar(&details, "details", true, "include every failure")
				return func(*requestFlags) map[string]any {
					return map[string]any{"js-enabled-only": jsEnabled, "js-server-only": serverOnly,
						"account": account, "stream": stream, "consumer": consumer, "details": details}
				}
			}},
		{use: "raft", aliases: []string{"raftz"}, short: "Show Raft state details", kind: sysapi.KindRaftz,
			flags: func(c *cobra.Command) func(*requestFlags) map[string]any {
				var account, group string
				c.Flags().StringVar(&account, "account", "", "only this account's groups")
				c.Flags().StringVar(&group, "group", "", "only this group")
				return func(*requestFlags) map[string]any { return map[string]any{"account": account, "group": group} }
			}},
		{use: "ipqueue", aliases: []string{"ipq", "ipqueuesz"}, short: "Show IP queue details", kind: sysapi.KindIpqueuesz,
			flags: func(c *cobra.Command) func(*requestFlags) map[string]any {
				var all bool
				var filter string
				c.Flags().BoolVar(&all, "all", true, "show all queues, empty ones too")
				c.Flags().StringVar(&filter, "filter", "", "only queues whose name contains this")
				return func(*requestFlags) map[string]any { return map[string]any{"all": all, "filter": filter} }
			}},
		{use: "statistics", aliases: []string{"stats", "statsz"}, short: "Show server statistics", kind: sysapi.KindStatsz},
	}
}

// subscriptionsFlag is the --subscriptions flag of routes and leafnodes.
func subscriptionsFlag(name string) func(c *cobra.Command) func(*requestFlags) map[string]any {
	return func(c *cobra.Command) func(*requestFlags) map[string]any {
		var subs bool
		c.Flags().BoolVar(&subs, name, false, "show subscription detail")
		return func(*requestFlags) map[string]any { return map[string]any{"subscriptions": subs} }
	}
}
