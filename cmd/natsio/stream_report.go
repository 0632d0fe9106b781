package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/natsio/natsio/jsapi"
	"github.com/spf13/cobra"
)

func (a *app) streamReportCmd() *cobra.Command {
	var (
		subject string
		sortBy  string
		raw     bool
	)
	c := &cobra.Command{
		Use:   "report",
		Short: "Report every stream's size, consumers and replication",
		Example: `  natsio stream report
  natsio stream report --sort messages
  natsio stream report --json`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			infos, err := collect(js.Streams(ctx, subject))
			if err != nil {
				return err
			}
			slices.SortFunc(infos, func(x, y *jsapi.StreamInfo) int {
				switch sortBy {
				case "messages":
					return cmp.Compare(y.State.Msgs, x.State.Msgs)
				case "bytes":
					return cmp.Compare(y.State.Bytes, x.State.Bytes)
				case "consumers":
					return cmp.Compare(y.State.Consumers, x.State.Consumers)
				}
				return strings.Compare(x.Config.Name, y.Config.Name)
			})
			if a.json {
				return a.printJSON(nonNil(infos))
			}
			if len(infos) == 0 {
				fmt.Fprintln(a.stderr, "No streams defined")
				return nil
			}
			num, size := numberFormats(raw)
			rows := make([][]string, 0, len(infos))
			for _, si := range infos {
				replicas := strconv.Itoa(max(si.Config.Replicas, 1))
				if si.Cluster != nil && si.Cluster.Leader != "" {
					replicas += " (leader " + si.Cluster.Leader + ")"
				}
				rows = append(rows, []string{si.Config.Name, string(orDefault(si.Config.Storage, jsapi.StorageFile)),
					strconv.Itoa(si.State.Consumers), num(si.State.Msgs), size(si.State.Bytes), strconv.Itoa(si.State.NumDeleted), replicas})
			}
			a.table([]string{"STREAM", "STORAGE", "CONSUMERS", "MESSAGES", "BYTES", "DELETED", "REPLICAS"}, rows)
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&subject, "subject", "", "only streams whose subjects overlap this one")
	fl.Var(newEnum(&sortBy, "name", "name", "messages", "bytes", "consumers"), "sort", "sort order")
	fl.BoolVarP(&raw, "raw", "r", false, "print plain numbers")
	return c
}

// numberFormats returns how report tables print counts and sizes: with
// thousands separators and units, or as plain numbers when raw.
func numberFormats(raw bool) (count, size func(uint64) string) {
	if raw {
		plain := func(n uint64) string { return strconv.FormatUint(n, 10) }
		return plain, plain
	}
	return commas, humanBytes
}
