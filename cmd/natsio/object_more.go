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

func (a *app) objectSealCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "seal STORE",
		Short: "Make a store read-only, for good",
		Long: `Seal STORE: no object can be put, changed or deleted afterwards, and this
cannot be undone. On a terminal it asks for confirmation unless --force.`,
		Example: `  natsio object seal releases --force`,
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			store := args[0]
			if !a.confirm(force, "Seal object store %s? It cannot be undone", store) {
				return userError{msg: "not sealed", hint: "answer y, or pass --force"}
			}
			nc, s, err := a.bindStore(ctx, store)
			if err != nil {
				return err
			}
			defer nc.Close()
			if err := s.Seal(ctx); err != nil {
				return storeErr(err, store, "")
			}
			if a.json {
				st, err := s.Status(ctx)
				if err != nil {
					return storeErr(err, store, "")
				}
				return a.printStoreStatus(st)
			}
			fmt.Fprintf(a.stdout, "Object store %s sealed\n", store)
			return nil
		},
	}
	c.Flags().BoolVarP(&force, "force", "f", false, "do not ask for confirmation")
	return c
}
