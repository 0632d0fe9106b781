package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/micro"
)

// The micro command discovers services through the $SRV subjects of
// ADR-32 (package micro): any service that follows the ADR answers,
// whichever client library it was written with.

func (a *app) microCmd() *cobra.Command {
	return group("micro", "Discover and inspect services (ADR-32)",
		`List the services that answer on $SRV (any NATS client's services that
follow ADR-32), show their endpoints, ping them, and read their counters.
Replies are gathered until none has come for --wait after the last one.`,
		`  natsio micro ls
  natsio micro info calc
  natsio micro stats calc --json
  natsio micro ping calc`,
		a.microLsCmd(), a.microInfoCmd(), a.microStatsCmd(), a.microPingCmd())
}

// discoverFlags are the flags shared by the micro subcommands.
type discoverFlags struct {
	wait   time.Duration
	prefix string
}

func (f *discoverFlags) add(c *cobra.Command) {
	c.Flags().Var(newDuration(&f.wait, micro.DefaultDiscoverStall), "wait",
		"how long to wait for one more reply after the last")
	c.Flags().StringVar(&f.prefix, "prefix", "",
		"discovery subject prefix instead of $SRV (services started with another prefix, or another account's services imported under one)")
}

func (f *discoverFlags) opts(id string) []micro.DiscoverOpt {
	opts := []micro.DiscoverOpt{micro.DiscoverStall(f.wait)}
	if f.prefix != "" {
		opts = append(opts, micro.DiscoverPrefix(f.prefix))
	}
	if id != "" {
		opts = append(opts, micro.DiscoverID(id))
	}
	return opts
}

// nameAndID splits the optional NAME [ID] arguments.
func nameAndID(args []string) (name, id string) {
	if len(args) > 0 {
		name = args[0]
	}
	if len(args) > 1 {
		id = args[1]
	}
	return name, id
}

// byIdentity orders instances by name, then id.
func byIdentity(a, b micro.ServiceIdentity) int {
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// partial turns a discovery that reached its bound on replies or bytes
// (a flood of answers) into a warning: the replies kept are shown.
func (a *app) partial(err error) error {
	if errors.Is(err, micro.ErrDiscoverLimit) {
		fmt.Fprintf(a.stderr, "Warning: %v; showing the replies kept\n", err)
		return nil
	}
	return err
}

// nobody is the error of a command that asked a named service and got no
// answer.
func nobody(name, id string) error {
	if id != "" {
		return fmt.Errorf("no instance %s of service %q answered", id, name)
	}
	return fmt.Errorf("no instance of service %q answered", name)
}

func (a *app) microLsCmd() *cobra.Command {
	var f discoverFlags
	c := &cobra.Command{
		Use:     "ls [NAME]",
		Aliases: []string{"list"},
		Short:   "List the service instances that answer",
		Example: `  natsio micro ls
  natsio micro ls calc --json`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			name, _ := nameAndID(args)
			infos, err := a.microInfos(c.Context(), &f, name, "")
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(nonNil(infos))
			}
			if len(infos) == 0 {
				fmt.Fprintln(a.stderr, "No services answered")
				return nil
			}
			rows := make([][]string, 0, len(infos))
			for _, in := range infos {
				rows = append(rows, []string{in.Name, in.Version, in.ID, strconv.Itoa(len(in.Endpoints)), orDash(in.Description)})
			}
			a.table([]string{"Name", "Version", "ID", "Endpoints", "Description"}, rows)
			return nil
		},
	}
	f.add(c)
	return c
}

// microInfos gathers INFO responses, sorted by name and id.
func (a *app) microInfos(ctx context.Context, f *discoverFlags, name, id string) ([]micro.Info, error) {
	nc, err := a.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	infos, err := micro.Infos(ctx, nc, name, f.opts(id)...)
	if err = a.partial(err); err != nil {
		return nil, err
	}
	slices.SortFunc(infos, func(x, y micro.Info) int { return byIdentity(x.ServiceIdentity, y.ServiceIdentity) })
	return infos, nil
}

func (a *app) microInfoCmd() *cobra.Command {
	var f discoverFlags
	c := &cobra.Command{
		Use:   "info NAME [ID]",
		Short: "Show a service's instances and their endpoints",
		Example: `  natsio micro info calc
  natsio micro info calc 0uwYZx7ivucAqEbtl5g53N --json`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			name, id := nameAndID(args)
			infos, err := a.microInfos(c.Context(), &f, name, id)
			if err != nil {
				return err
			}
			if len(infos) == 0 {
				return nobody(name, id)
			}
			if a.json {
				return a.printJSON(infos)
			}
			for i, in := range infos {
				if i > 0 {
					fmt.Fprintln(a.stdout)
				}
				s := &section{title: "Service " + in.Name + " " + in.ID + ":"}
				s.add("Version", in.Version)
				s.addIf("Description", in.Description)
				for _, k := range sortedKeys(in.Metadata) {
					s.add("Metadata "+k, in.Metadata[k])
				}
				a.sections(s)
				rows := make([][]string, 0, len(in.Endpoints))
				for _, e := range in.Endpoints {
					rows = append(rows, []string{e.Name, e.Subject, orDash(e.QueueGroup)})
				}
				fmt.Fprintln(a.stdout)
				a.table([]string{"Endpoint", "Subject", "Queue group"}, rows)
			}
			return nil
		},
	}
	f.add(c)
	return c
}

func (a *app) microStatsCmd() *cobra.Command {
	var f discoverFlags
	c := &cobra.Command{
		Use:   "stats NAME [ID]",
		Short: "Show the request counters of a service's endpoints",
		Example: `  natsio micro stats calc
  natsio micro stats calc --json`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			name, id := nameAndID(args)
			nc, err := a.connect(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			stats, err := micro.StatsOf(ctx, nc, name, f.opts(id)...)
			if err = a.partial(err); err != nil {
				return err
			}
			if len(stats) == 0 {
				return nobody(name, id)
			}
			slices.SortFunc(stats, func(x, y micro.Stats) int { return byIdentity(x.ServiceIdentity, y.ServiceIdentity) })
			if a.json {
				return a.printJSON(stats)
			}
			var rows [][]string
			var reqs, errs uint64
			for _, st := range stats {
				for _, e := range st.Endpoints {
					rows = append(rows, []string{st.ID, e.Name, commas(e.NumRequests), commas(e.NumErrors),
						humanDuration(e.AverageProcessingTime, "0s"), orDash(e.LastError)})
					reqs += e.NumRequests
					errs += e.NumErrors
				}
			}
			a.table([]string{"Instance", "Endpoint", "Requests", "Errors", "Average time", "Last error"}, rows)
			fmt.Fprintf(a.stdout, "\n%s %s, %s %s across %d %s\n", commas(reqs), plural(int(reqs), "request", "requests"),
				commas(errs), plural(int(errs), "error", "errors"), len(stats), plural(len(stats), "instance", "instances"))
			return nil
		},
	}
	f.add(c)
	return c
}

func (a *app) microPingCmd() *cobra.Command {
	var f discoverFlags
	c := &cobra.Command{
		Use:   "ping [NAME]",
		Short: "Ping every service, or the instances of one",
		Example: `  natsio micro ping
  natsio micro ping calc`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			name, _ := nameAndID(args)
			nc, err := a.connect(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			start := time.Now()
			pongs, err := micro.Ping(ctx, nc, name, f.opts("")...)
			if err = a.partial(err); err != nil {
				return err
			}
			slices.SortFunc(pongs, func(x, y micro.PingResponse) int { return byIdentity(x.ServiceIdentity, y.ServiceIdentity) })
			if a.json {
				return a.printJSON(nonNil(pongs))
			}
			if len(pongs) == 0 {
				if name != "" {
					return nobody(name, "")
				}
				fmt.Fprintln(a.stderr, "No services answered")
				return nil
			}
			for _, p := range pongs {
				fmt.Fprintf(a.stdout, "%s %s %s\n", p.Name, p.Version, p.ID)
			}
			fmt.Fprintf(a.stderr, "%d answered within %s\n", len(pongs), humanDuration(time.Since(start), "0s"))
			return nil
		},
	}
	f.add(c)
	return c
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
