package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/objstore"
)

func (a *app) objectWatchCmd() *cobra.Command {
	var (
		count       int
		updatesOnly bool
		noDeletes   bool
	)
	c := &cobra.Command{
		Use:   "watch STORE",
		Short: "Print changes to a store's objects as they happen",
		Long: `Print the current objects of STORE, then every put, meta update, link and
delete as it is stored, until --count changes were printed or Ctrl-C.
"Watching … (initial values done)" is printed on stderr once the current
objects have been printed.`,
		Example: `  natsio object watch files
  natsio object watch files --updates-only --json`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			store := args[0]
			var opts []objstore.WatchOpt
			if updatesOnly {
				opts = append(opts, objstore.UpdatesOnly())
			}
			if noDeletes {
				opts = append(opts, objstore.IgnoreDeletes())
			}
			nc, s, err := a.bindStore(ctx, store)
			if err != nil {
				return err
			}
			defer nc.Close()
			n := 0
			for info, err := range s.Watch(ctx, opts...) {
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return storeErr(err, store, "")
				}
				if info == nil {
					fmt.Fprintf(a.stderr, "Watching object store %s (initial values done)\n", store)
					continue
				}
				n++
				if a.json {
					a.printJSONLine(info)
				} else {
					what := "PUT"
					switch {
					case info.Deleted:
						what = "DEL"
					case info.IsLink():
						what = "LINK"
					}
					fmt.Fprintf(a.stdout, "[%s] %s %s > %s", info.ModTime.Local().Format("2006-01-02 15:04:05"), what, store, info.Name)
					if !info.Deleted && !info.IsLink() {
						fmt.Fprintf(a.stdout, " (%s)", humanBytes(info.Size))
					}
					fmt.Fprintln(a.stdout)
				}
				if count > 0 && n >= count {
					return nil
				}
			}
			return nil
		},
	}
	c.Flags().IntVarP(&count, "count", "c", 0, "exit after this many changes (0: until Ctrl-C)")
	c.Flags().BoolVar(&updatesOnly, "updates-only", false, "print only changes made from now on")
	c.Flags().BoolVar(&noDeletes, "ignore-deletes", false, "do not print deletes")
	return c
}
