package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

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
			if err := a.confirmed(force, "not sealed", "Seal object store %s? It cannot be undone", store); err != nil {
				return err
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
