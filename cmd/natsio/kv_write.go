package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/kv"
)

func (a *app) kvCreateCmd() *cobra.Command {
	var ttl time.Duration
	c := &cobra.Command{
		Use:   "create BUCKET KEY [VALUE]",
		Short: "Store a value only if the key has none",
		Long: `Store VALUE under KEY in BUCKET only when the key has no value (it was never
written, or its latest revision is a delete or purge). Without VALUE it is
read from stdin. --ttl expires the key (the bucket needs --marker-ttl). To
create a bucket, use 'kv add'.`,
		Example: `  natsio kv create config lock me
  natsio kv create sessions s-42 active --ttl 30m`,
		Args: rangeArgs(2, 3),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			bucket, key := args[0], args[1]
			nc, b, value, err := a.bindKeyValue(ctx, bucket, key, args)
			if err != nil {
				return err
			}
			defer nc.Close()
			var opts []kv.CreateOpt
			if ttl > 0 {
				opts = append(opts, kv.KeyTTL(ttl))
			}
			rev, err := b.Create(ctx, key, value, opts...)
			if errors.Is(err, kv.ErrKeyExists) {
				return userError{msg: fmt.Sprintf("key %q already has a value in bucket %s", key, bucket),
					hint: fmt.Sprintf("overwrite it with `natsio kv put %s %s VALUE`", bucket, key), err: err}
			}
			if err != nil {
				return bucketErr(err, bucket, key)
			}
			return a.printStored(bucket, key, rev)
		},
	}
	c.Flags().Var(newDuration(&ttl, 0), "ttl", "expire the key after this long (0: never)")
	return c
}

func (a *app) kvUpdateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "update BUCKET KEY VALUE REVISION",
		Short: "Store a value only if the key is at a revision",
		Long: `Store VALUE under KEY in BUCKET only when the key's latest revision is
REVISION (compare and set): a concurrent writer makes it fail rather than be
overwritten.`,
		Example: `  natsio kv update config color red 3`,
		Args:    exactArgs(4),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			bucket, key, value := args[0], args[1], []byte(args[2])
			revision, err := strconv.ParseUint(args[3], 10, 64)
			if err != nil {
				return usageError{err: fmt.Errorf("revision %q is not a number", args[3]), cmd: c}
			}
			nc, b, err := a.bindKey(ctx, bucket, key)
			if err != nil {
				return err
			}
			defer nc.Close()
			rev, err := b.Update(ctx, key, value, revision)
			if errors.Is(err, kv.ErrRevisionMismatch) {
				return notAtRevision(err, bucket, key, revision)
			}
			if err != nil {
				return bucketErr(err, bucket, key)
			}
			return a.printStored(bucket, key, rev)
		},
	}
}

func (a *app) kvPurgeCmd() *cobra.Command {
	var (
		force bool
		ttl   time.Duration
	)
	c := &cobra.Command{
		Use:   "purge BUCKET KEY",
		Short: "Remove a key with its whole history",
		Long: `Remove every revision of KEY from BUCKET, leaving one purge marker (kept for
--ttl when given; the bucket needs --marker-ttl). On a terminal it asks for
confirmation unless --force.`,
		Example: `  natsio kv purge config color --force`,
		Args:    exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			bucket, key := args[0], args[1]
			if err := kv.ValidateKey(key); err != nil {
				return bucketErr(err, bucket, key)
			}
			if err := a.confirmed(force, "not purged", "Purge key %s > %s with its history?", bucket, key); err != nil {
				return err
			}
			nc, _, b, err := a.bindBucket(ctx, bucket)
			if err != nil {
				return err
			}
			defer nc.Close()
			var opts []kv.PurgeOpt
			if ttl > 0 {
				opts = append(opts, kv.PurgeTTL(ttl))
			}
			if err := b.Purge(ctx, key, opts...); err != nil {
				return bucketErr(err, bucket, key)
			}
			if a.json {
				return a.printJSON(map[string]any{"bucket": bucket, "key": key, "purged": true})
			}
			fmt.Fprintf(a.stdout, "Purged %s > %s\n", bucket, key)
			return nil
		},
	}
	c.Flags().BoolVarP(&force, "force", "f", false, "do not ask for confirmation")
	c.Flags().Var(newDuration(&ttl, 0), "ttl", "keep the purge marker this long (0: for ever)")
	return c
}

func (a *app) kvRevertCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "revert BUCKET KEY REVISION",
		Short: "Store a past revision's value again",
		Long: `Store the value KEY had at REVISION as its new latest value (a new
revision; the history is kept). On a terminal it asks for confirmation
unless --force.`,
		Example: `  natsio kv history config color
  natsio kv revert config color 2 --force`,
		Args: exactArgs(3),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			bucket, key := args[0], args[1]
			revision, err := strconv.ParseUint(args[2], 10, 64)
			if err != nil || revision == 0 {
				return usageError{err: fmt.Errorf("revision %q is not a positive number", args[2]), cmd: c}
			}
			nc, b, err := a.bindKey(ctx, bucket, key)
			if err != nil {
				return err
			}
			defer nc.Close()
			old, err := b.GetRevision(ctx, key, revision)
			if err != nil {
				if errors.Is(err, kv.ErrKeyNotFound) || errors.Is(err, kv.ErrKeyDeleted) {
					return userError{msg: fmt.Sprintf("key %q has no value at revision %d in bucket %s", key, revision, bucket),
						hint: fmt.Sprintf("see its revisions with `natsio kv history %s %s`", bucket, key), err: err}
				}
				return bucketErr(err, bucket, key)
			}
			if err := a.confirmed(force, "not reverted", "Store the value of %s > %s at revision %d (%d bytes) again?", bucket, key, revision, len(old.Value)); err != nil {
				return err
			}
			rev, err := b.Put(ctx, key, old.Value)
			if err != nil {
				return bucketErr(err, bucket, key)
			}
			if a.json {
				return a.printJSON(map[string]any{"bucket": bucket, "key": key, "revision": rev, "reverted_to": revision})
			}
			fmt.Fprintf(a.stdout, "Reverted %s > %s to revision %d: stored as revision %d\n", bucket, key, revision, rev)
			return nil
		},
	}
	c.Flags().BoolVar(&force, "force", false, "do not ask for confirmation")
	return c
}
