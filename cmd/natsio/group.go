package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pcgroup"
)

// groupCmd covers what orbit.go's cg tool does, on groups both clients
// share.
func (a *app) groupCmd() *cobra.Command {
	c := group("group", "Manage partitioned consumer groups (orbit.go pcgroups compatible)",
		`Partitioned consumer groups split a stream into partitions by a key in its
subjects and give each partition to one member at a time, so every key is
processed in order while the group scales out. Static groups consume a stream
that partitions its own subjects; elastic groups source any stream into a
work-queue stream and change members while members run. Groups are shared with
orbit.go's pcgroups and its cg tool. Server 2.11+.`,
		`  natsio group create elastic ORDERS billing 8 --filter 'orders.*.*=1'
  natsio group add ORDERS billing m1 m2
  natsio group consume ORDERS billing m1
  natsio group info ORDERS billing
  natsio group step-down ORDERS billing m1
  natsio group rm ORDERS billing --force`,
		a.groupCreateCmd(), a.groupLsCmd(), a.groupInfoCmd(), a.groupRmCmd(),
		a.groupMembersCmd(true), a.groupMembersCmd(false), a.groupMapCmd(), a.groupUnmapCmd(),
		a.groupStepDownCmd(), a.groupConsumeCmd())
	c.Aliases = []string{"cg"}
	return c
}

// kindFlag is --kind: static, elastic, or "" to find the group.
type kindFlag struct{ v string }

func (k *kindFlag) add(c *cobra.Command) {
	c.Flags().StringVar(&k.v, "kind", "", "static or elastic (default: whichever exists)")
}

// resolve returns the group's kind: the flag's, or the kind under which
// the group exists (elastic first).
func (k *kindFlag) resolve(ctx context.Context, js *jsapi.JS, stream, group string) (pcgroup.Kind, error) {
	switch k.v {
	case "static":
		return pcgroup.Static, nil
	case "elastic":
		return pcgroup.Elastic, nil
	case "":
	default:
		return 0, userError{msg: fmt.Sprintf("--kind %q: want static or elastic", k.v)}
	}
	if _, err := pcgroup.GetElastic(ctx, js, stream, group); err == nil {
		return pcgroup.Elastic, nil
	} else if !errors.Is(err, pcgroup.ErrGroupNotFound) {
		return 0, err
	}
	if _, err := pcgroup.GetStatic(ctx, js, stream, group); err == nil {
		return pcgroup.Static, nil
	} else if !errors.Is(err, pcgroup.ErrGroupNotFound) {
		return 0, err
	}
	return 0, groupNotFound(stream, group)
}

func groupNotFound(stream, group string) error {
	return userError{msg: fmt.Sprintf("no consumer group %s on stream %s", group, stream),
		hint: "'natsio group ls " + stream + "' lists the stream's groups", err: pcgroup.ErrGroupNotFound}
}

// parseMappings reads "member:p1,p2" arguments.
func parseMappings(args []string) ([]pcgroup.MemberMapping, error) {
	var out []pcgroup.MemberMapping
	for _, a := range args {
		member, parts, ok := strings.Cut(a, ":")
		if !ok || member == "" || parts == "" {
			return nil, fmt.Errorf("mapping %q: want MEMBER:P1,P2,…", a)
		}
		m := pcgroup.MemberMapping{Member: member}
		for _, p := range strings.Split(parts, ",") {
			n, err := strconv.Atoi(p)
			if err != nil {
				return nil, fmt.Errorf("mapping %q: partition %q is not a number", a, p)
			}
			m.Partitions = append(m.Partitions, n)
		}
		out = append(out, m)
	}
	return out, nil
}

// parsePartitioningFilter reads "FILTER[=W1,W2]".
func parsePartitioningFilter(s string) (pcgroup.PartitioningFilter, error) {
	f, ws, ok := strings.Cut(s, "=")
	pf := pcgroup.PartitioningFilter{Filter: f, PartitioningWildcards: []int{}}
	if !ok {
		return pf, nil
	}
	for _, w := range strings.Split(ws, ",") {
		n, err := strconv.Atoi(w)
		if err != nil {
			return pf, fmt.Errorf("filter %q: wildcard index %q is not a number", s, w)
		}
		pf.PartitioningWildcards = append(pf.PartitioningWildcards, n)
	}
	return pf, nil
}

func parseMax(c *cobra.Command, s string) (uint, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 {
		return 0, usageError{err: fmt.Errorf("MAX_MEMBERS %q: want a positive number", s), cmd: c}
	}
	return uint(n), nil
}

func (a *app) groupCreateCmd() *cobra.Command {
	var (
		filters        []string
		members        []string
		mappings       []string
		maxBufMsgs     int64
		maxBufBytes    int64
		staticExamples = `  natsio group create static EVENTS audit 4 --members a,b
  natsio group create static EVENTS audit 4 --mapping a:0,1 --mapping b:2,3`
	)
	static := &cobra.Command{
		Use:   "static STREAM GROUP MAX_MEMBERS",
		Short: "Create a static group on a stream that partitions its subjects",
		Long: `Create a static group of MAX_MEMBERS partitions on STREAM, whose subjects
begin with a partition number (a stream subject transform such as
'{{partition(4,1)}}.events.{{wildcard(1)}}'). Give --members (partitions
dealt out) or --mapping MEMBER:P1,P2 for each member, not both.`,
		Example: staticExamples,
		Args:    exactArgs(3),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			max, err := parseMax(c, args[2])
			if err != nil {
				return err
			}
			mm, err := parseMappings(mappings)
			if err != nil {
				return usageError{err: err, cmd: c}
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			cfg, err := pcgroup.CreateStatic(ctx, js, args[0], args[1], pcgroup.StaticConfig{MaxMembers: max, Filters: filters, Members: members, MemberMappings: mm})
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(cfg)
			}
			fmt.Fprintf(a.stdout, "Static consumer group %s created on stream %s with %d partitions\n", args[1], args[0], max)
			return nil
		},
	}
	static.Flags().StringSliceVar(&filters, "filter", nil, "consume only these subjects (after the partition token)")
	static.Flags().StringSliceVar(&members, "members", nil, "member names")
	static.Flags().StringArrayVar(&mappings, "mapping", nil, "MEMBER:P1,P2 (repeatable)")

	var efilters []string
	elastic := &cobra.Command{
		Use:   "elastic STREAM GROUP MAX_MEMBERS",
		Short: "Create an elastic group sourcing a stream",
		Long: `Create an elastic group of MAX_MEMBERS partitions on STREAM: a work-queue
stream STREAM-GROUP sources STREAM and puts the partition number in front of
each subject. --filter FILTER=W1,W2 selects subjects and partitions them by
the '*' wildcards W1, W2 (counted from 1); without =…, by the whole subject.
Members are added with 'natsio group add'.`,
		Example: `  natsio group create elastic ORDERS billing 8 --filter 'orders.*.*=1'
  natsio group create elastic ORDERS all 4`,
		Args: exactArgs(3),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			max, err := parseMax(c, args[2])
			if err != nil {
				return err
			}
			var pfs []pcgroup.PartitioningFilter
			for _, f := range efilters {
				pf, err := parsePartitioningFilter(f)
				if err != nil {
					return usageError{err: err, cmd: c}
				}
				pfs = append(pfs, pf)
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			cfg, err := pcgroup.CreateElastic(ctx, js, args[0], args[1], pcgroup.ElasticConfig{MaxMembers: max,
				PartitioningFilters: pfs, MaxBufferedMsgs: maxBufMsgs, MaxBufferedBytes: maxBufBytes})
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(cfg)
			}
			fmt.Fprintf(a.stdout, "Elastic consumer group %s created on stream %s with %d partitions (stream %s)\n",
				args[1], args[0], max, pcgroup.ElasticStreamName(args[0], args[1]))
			return nil
		},
	}
	elastic.Flags().StringArrayVar(&efilters, "filter", nil, "FILTER[=W1,W2]: subjects and their partitioning wildcards (repeatable)")
	elastic.Flags().Int64Var(&maxBufMsgs, "max-buffered-msgs", 0, "bound the group's stream in messages (0: unlimited)")
	elastic.Flags().Int64Var(&maxBufBytes, "max-buffered-bytes", 0, "bound the group's stream in bytes (0: unlimited)")
	return group("create", "Create a static or elastic consumer group", "", staticExamples, static, elastic)
}

func (a *app) groupLsCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "ls STREAM",
		Aliases: []string{"list"},
		Short:   "List the consumer groups of a stream",
		Example: `  natsio group ls ORDERS`,
		Args:    exactArgs(1),
		RunE: a.withJS(func(ctx context.Context, js *jsapi.JS, args []string) error {
			type row struct {
				Name string `json:"name"`
				Kind string `json:"kind"`
			}
			var rows []row
			for _, k := range []pcgroup.Kind{pcgroup.Elastic, pcgroup.Static} {
				names, err := pcgroup.List(ctx, js, k, args[0])
				if err != nil {
					return err
				}
				for _, n := range names {
					rows = append(rows, row{n, k.String()})
				}
			}
			if a.json {
				if rows == nil {
					rows = []row{}
				}
				return a.printJSON(rows)
			}
			if len(rows) == 0 {
				fmt.Fprintf(a.stdout, "No consumer groups on stream %s\n", args[0])
				return nil
			}
			var t [][]string
			for _, r := range rows {
				t = append(t, []string{r.Name, r.Kind})
			}
			a.table([]string{"GROUP", "KIND"}, t)
			return nil
		}),
	}
}

func (a *app) groupInfoCmd() *cobra.Command {
	var kind kindFlag
	c := &cobra.Command{
		Use:     "info STREAM GROUP",
		Short:   "Show a consumer group's configuration and active members",
		Example: `  natsio group info ORDERS billing`,
		Args:    exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			stream, name := args[0], args[1]
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			k, err := kind.resolve(ctx, js, stream, name)
			if err != nil {
				return err
			}
			var cfg any
			var members []string
			var mappings []pcgroup.MemberMapping
			info := &section{title: "Consumer group " + name + " on " + stream}
			info.add("Kind", k.String())
			if k == pcgroup.Static {
				sc, err := pcgroup.GetStatic(ctx, js, stream, name)
				if err != nil {
					return err
				}
				cfg, members, mappings = sc, sc.Members, sc.MemberMappings
				info.add("Partitions", strconv.FormatUint(uint64(sc.MaxMembers), 10))
				info.addIf("Filters", strings.Join(sc.Filters, ", "))
			} else {
				ec, err := pcgroup.GetElastic(ctx, js, stream, name)
				if err != nil {
					return err
				}
				cfg, members, mappings = ec, ec.Members, ec.MemberMappings
				info.add("Partitions", strconv.FormatUint(uint64(ec.MaxMembers), 10))
				info.add("Group stream", pcgroup.ElasticStreamName(stream, name))
				for _, pf := range ec.PartitioningFilters {
					info.add("Filter", fmt.Sprintf("%s (partitioning wildcards %v)", pf.Filter, pf.PartitioningWildcards))
				}
				if ec.MaxBufferedMsgs > 0 || ec.MaxBufferedBytes > 0 {
					info.add("Buffer", fmt.Sprintf("%d msgs, %d bytes", ec.MaxBufferedMsgs, ec.MaxBufferedBytes))
				}
			}
			active, err := pcgroup.ActiveMembers(ctx, js, k, stream, name)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]any{"kind": k.String(), "config": cfg, "active_members": active})
			}
			ms := &section{title: "Members"}
			for _, m := range members {
				ms.add(m, state(m, active))
			}
			for _, m := range mappings {
				ms.add(m.Member, fmt.Sprintf("partitions %v, %s", m.Partitions, state(m.Member, active)))
			}
			if len(members) == 0 && len(mappings) == 0 {
				ms.add("none", "add members with 'natsio group add'")
			}
			a.sections(info, ms)
			return nil
		},
	}
	kind.add(c)
	return c
}

func state(member string, active []string) string {
	for _, a := range active {
		if a == member {
			return "active"
		}
	}
	return "inactive"
}

func (a *app) groupRmCmd() *cobra.Command {
	var (
		kind  kindFlag
		force bool
	)
	c := &cobra.Command{
		Use:     "rm STREAM GROUP",
		Aliases: []string{"delete"},
		Short:   "Delete a consumer group (members stop)",
		Example: `  natsio group rm ORDERS billing --force`,
		Args:    exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			stream, name := args[0], args[1]
			if err := a.confirmed(force, "not deleted", "Delete consumer group %s on %s?", name, stream); err != nil {
				return err
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			k, err := kind.resolve(ctx, js, stream, name)
			if err != nil {
				return err
			}
			if err := pcgroup.Delete(ctx, js, k, stream, name); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Consumer group %s on %s deleted\n", name, stream)
			return nil
		},
	}
	kind.add(c)
	c.Flags().BoolVarP(&force, "force", "f", false, "do not ask for confirmation")
	return c
}

// groupMembersCmd is "add" (add true) or "drop".
func (a *app) groupMembersCmd(add bool) *cobra.Command {
	use, short, f := "add STREAM GROUP MEMBER...", "Add members to an elastic group", pcgroup.AddMembers
	if !add {
		use, short, f = "drop STREAM GROUP MEMBER...", "Drop members from an elastic group", pcgroup.DropMembers
	}
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Long:    short + ". Running members move to their new partitions without a restart.",
		Example: "  natsio group " + strings.Fields(use)[0] + " ORDERS billing m3",
		Args:    cobra.MinimumNArgs(3),
		RunE: a.withJS(func(ctx context.Context, js *jsapi.JS, args []string) error {
			members, err := f(ctx, js, args[0], args[1], args[2:]...)
			if errors.Is(err, pcgroup.ErrGroupNotFound) {
				return groupNotFound(args[0], args[1])
			}
			if err != nil {
				return err
			}
			if a.json {
				if members == nil {
					members = []string{}
				}
				return a.printJSON(members)
			}
			fmt.Fprintf(a.stdout, "Members of %s: %s\n", args[1], strings.Join(members, ", "))
			return nil
		}),
	}
}

func (a *app) groupMapCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "map STREAM GROUP MEMBER:P1,P2...",
		Aliases: []string{"create-mapping"},
		Short:   "Give an elastic group's members explicit partitions",
		Long:    "Replace an elastic group's members by member mappings: every partition mapped exactly once.",
		Example: `  natsio group map ORDERS billing m1:0,1,2 m2:3`,
		Args:    cobra.MinimumNArgs(3),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			mm, err := parseMappings(args[2:])
			if err != nil {
				return usageError{err: err, cmd: c}
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			if err := pcgroup.SetMappings(ctx, js, args[0], args[1], mm); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Member mappings of %s set\n", args[1])
			return nil
		},
	}
}

func (a *app) groupUnmapCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "unmap STREAM GROUP",
		Aliases: []string{"delete-mapping"},
		Short:   "Remove an elastic group's member mappings",
		Example: `  natsio group unmap ORDERS billing`,
		Args:    exactArgs(2),
		RunE: a.withJS(func(ctx context.Context, js *jsapi.JS, args []string) error {
			if err := pcgroup.DeleteMappings(ctx, js, args[0], args[1]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Member mappings of %s removed\n", args[1])
			return nil
		}),
	}
}

func (a *app) groupStepDownCmd() *cobra.Command {
	var kind kindFlag
	c := &cobra.Command{
		Use:     "step-down STREAM GROUP MEMBER",
		Aliases: []string{"stepdown", "sd"},
		Short:   "Move a member's pin to one of its standby instances",
		Example: `  natsio group step-down ORDERS billing m1`,
		Args:    exactArgs(3),
		RunE: a.withJS(func(ctx context.Context, js *jsapi.JS, args []string) error {
			k, err := kind.resolve(ctx, js, args[0], args[1])
			if err != nil {
				return err
			}
			if err := pcgroup.StepDown(ctx, js, k, args[0], args[1], args[2]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Member %s of %s stepped down\n", args[2], args[1])
			return nil
		}),
	}
	kind.add(c)
	return c
}

func (a *app) groupConsumeCmd() *cobra.Command {
	var (
		kind    kindFlag
		sleep   time.Duration
		count   int
		ackWait time.Duration
	)
	c := &cobra.Command{
		Use:     "consume STREAM GROUP MEMBER",
		Aliases: []string{"join"},
		Short:   "Join a group as MEMBER and print its messages (a demo member)",
		Long: `Join the group as an instance of MEMBER, print each message it is given
(partition token removed) and acknowledge it after --sleep. Start several with
one MEMBER name for hot standbys. Runs until Ctrl-C or --count messages.`,
		Example: `  natsio group consume ORDERS billing m1 --sleep 20ms`,
		Args:    exactArgs(3),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, cancel := context.WithCancel(c.Context())
			defer cancel()
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			k, err := kind.resolve(ctx, js, args[0], args[1])
			if err != nil {
				return err
			}
			var n atomic.Int64
			out := make(chan string, 64)
			m, err := pcgroup.Join(ctx, js, k, args[0], args[1], args[2], func(hctx context.Context, msg *jsapi.Msg) error {
				if sleep > 0 {
					t := time.NewTimer(sleep)
					select {
					case <-t.C:
					case <-hctx.Done():
						t.Stop()
						return hctx.Err()
					}
				}
				if err := msg.AckSync(hctx); err != nil {
					return err
				}
				md, _ := msg.Metadata()
				select {
				case out <- fmt.Sprintf("[%s] #%d %s: %s", args[2], md.StreamSeq, msg.Subject, msg.Data):
				case <-hctx.Done():
				}
				if count > 0 && n.Add(1) >= int64(count) {
					cancel()
				}
				return nil
			}, pcgroup.MemberConfig{Consumer: jsapi.ConsumerConfig{AckWait: ackWait}})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "Joined %s group %s on %s as %s\n", k, args[1], args[0], args[2])
			for {
				select {
				case line := <-out:
					fmt.Fprintln(a.stdout, line)
				case <-m.Done():
					for {
						select {
						case line := <-out:
							fmt.Fprintln(a.stdout, line)
						default:
							return m.Err()
						}
					}
				}
			}
		},
	}
	kind.add(c)
	c.Flags().DurationVar(&sleep, "sleep", 0, "simulated processing time per message")
	c.Flags().IntVar(&count, "count", 0, "stop after this many messages (0: until Ctrl-C)")
	c.Flags().DurationVar(&ackWait, "ack-wait", 0, "the member consumer's AckWait (default 5s): pin and failover timers derive from it")
	return c
}

// withJS runs f with a JetStream view of a new connection, closed after.
func (a *app) withJS(f func(ctx context.Context, js *jsapi.JS, args []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		nc, js, err := a.jetstream(c.Context())
		if err != nil {
			return err
		}
		defer nc.Close()
		return f(c.Context(), js, args)
	}
}
