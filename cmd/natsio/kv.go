package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
)

func (a *app) kvCmd() *cobra.Command {
	return group("kv", "Use JetStream key-value buckets",
		`Key-value buckets keep the latest value (and optionally a history) of
each key, on a stream named KV_<bucket>. They are compatible with the buckets
of the nats CLI and nats.go.`,
		`  natsio kv add config --history 5
  natsio kv put config color blue
  natsio kv get config color
  natsio kv create config lock me        # only if the key has no value
  natsio kv update config color red 1    # only if the key is at revision 1
  natsio kv watch config
  natsio kv history config color
  natsio kv revert config color 1
  natsio kv del config color
  natsio kv ls config
  natsio kv info config
  natsio kv del config --force           # the whole bucket`,
		a.kvAddCmd(), a.kvPutCmd(), a.kvGetCmd(), a.kvCreateCmd(), a.kvUpdateCmd(), a.kvDelCmd(), a.kvPurgeCmd(),
		a.kvRevertCmd(), a.kvWatchCmd(), a.kvLsCmd(), a.kvInfoCmd(), a.kvHistoryCmd())
}

// bucketErr names a missing bucket, key or an invalid name in err.
func bucketErr(err error, bucket, key string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kv.ErrBucketNotFound), errors.Is(err, jsapi.ErrStreamNotFound):
		return userError{msg: fmt.Sprintf("bucket %q not found", bucket),
			hint: "list buckets with `natsio kv ls`, or create it with `natsio kv add " + bucket + "`", err: err}
	case errors.Is(err, kv.ErrInvalidBucketName):
		return userError{msg: fmt.Sprintf("invalid bucket name %q", bucket),
			hint: "bucket names use letters, digits, '-' and '_'", err: err}
	case errors.Is(err, kv.ErrInvalidKey):
		return userError{msg: fmt.Sprintf("invalid key %q", key),
			hint: "keys use letters, digits and '-', '/', '_', '=', '.' (not first, last or doubled)", err: err}
	case errors.Is(err, kv.ErrKeyDeleted):
		return userError{msg: fmt.Sprintf("key %q was deleted from bucket %s", key, bucket),
			hint: fmt.Sprintf("see its past values with `natsio kv history %s %s`", bucket, key), err: err}
	case errors.Is(err, kv.ErrKeyNotFound):
		return userError{msg: fmt.Sprintf("key %q not found in bucket %s", key, bucket),
			hint: fmt.Sprintf("list keys with `natsio kv ls %s`", bucket), err: err}
	case errors.Is(err, jsapi.ErrStreamSealed):
		return userError{msg: fmt.Sprintf("bucket %q is sealed: it cannot be changed", bucket), err: err}
	case errors.Is(err, kv.ErrBadBucket):
		return userError{msg: fmt.Sprintf("stream KV_%s is not a key-value bucket", bucket), err: err}
	}
	return err
}

// bindBucket connects and binds the bucket; the caller closes the
// connection.
func (a *app) bindBucket(ctx context.Context, bucket string) (io.Closer, *jsapi.JS, *kv.Bucket, error) {
	if err := kv.ValidateBucketName(bucket); err != nil {
		return nil, nil, nil, bucketErr(err, bucket, "")
	}
	nc, js, err := a.jetstream(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := kv.Bind(ctx, js, bucket)
	if err != nil {
		nc.Close()
		return nil, nil, nil, bucketErr(err, bucket, "")
	}
	return nc, js, b, nil
}

// bindKey checks the key, then connects and binds the bucket; the caller
// closes the connection.
func (a *app) bindKey(ctx context.Context, bucket, key string) (io.Closer, *kv.Bucket, error) {
	if err := kv.ValidateKey(key); err != nil {
		return nil, nil, bucketErr(err, bucket, key)
	}
	nc, _, b, err := a.bindBucket(ctx, bucket)
	return nc, b, err
}

// bindKeyValue is bindKey for a write: between checking the key and
// binding the bucket it reads the value, args[2] or else stdin.
func (a *app) bindKeyValue(ctx context.Context, bucket, key string, args []string) (io.Closer, *kv.Bucket, []byte, error) {
	if err := kv.ValidateKey(key); err != nil {
		return nil, nil, nil, bucketErr(err, bucket, key)
	}
	value, err := a.kvValue(args, 2)
	if err != nil {
		return nil, nil, nil, err
	}
	nc, _, b, err := a.bindBucket(ctx, bucket)
	return nc, b, value, err
}

func (a *app) kvAddCmd() *cobra.Command {
	var (
		cfg      kv.Config
		history  int
		storage  string
		maxBytes int64
		maxValue int64
	)
	c := &cobra.Command{
		Use:     "add BUCKET",
		Aliases: []string{"new"},
		Short:   "Create a key-value bucket",
		Example: `  natsio kv add config
  natsio kv add sessions --ttl 30m --storage memory
  natsio kv add config --history 10 --max-bytes 100MiB`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			cfg.Bucket = args[0]
			if history < 1 || history > kv.MaxHistory {
				return usageError{err: fmt.Errorf("--history must be 1 to %d, got %d", kv.MaxHistory, history), cmd: c}
			}
			cfg.History = uint8(history)
			cfg.Storage = jsapi.StorageType(storage)
			if maxBytes > 0 {
				cfg.MaxBytes = maxBytes
			}
			if maxValue > 0 {
				cfg.MaxValueSize = int32(min(maxValue, 1<<31-1))
			}
			if err := kv.ValidateBucketName(cfg.Bucket); err != nil {
				return bucketErr(err, cfg.Bucket, "")
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			b, err := kv.CreateBucket(ctx, js, cfg)
			if err != nil {
				if errors.Is(err, kv.ErrBucketExists) {
					return userError{msg: fmt.Sprintf("bucket %q already exists with another configuration", cfg.Bucket),
						hint: "remove it first with `natsio kv rm " + cfg.Bucket + "`, or pick another name", err: err}
				}
				return err
			}
			if !a.json {
				fmt.Fprintf(a.stdout, "Bucket %s created\n\n", b.Name())
			}
			st, err := b.Status(ctx)
			if err != nil {
				return err
			}
			return a.printBucketStatus(st)
		},
	}
	fl := c.Flags()
	fl.StringVar(&cfg.Description, "description", "", "description")
	fl.IntVar(&history, "history", 1, "revisions kept per key (1-64)")
	fl.Var(newDuration(&cfg.TTL, 0), "ttl", "expire values this long after they are written (0: never)")
	fl.Var(newSize(&maxBytes, -1), "max-bytes", "largest size of the bucket (-1: unlimited)")
	fl.Var(sizeValue{&maxBytes}, "max-bucket-size", "the same as --max-bytes (the nats CLI's name)")
	fl.Var(newSize(&maxValue, -1), "max-value-size", "largest value (-1: unlimited)")
	fl.Var(newEnum(&storage, "file", "file", "memory"), "storage", "where values are stored")
	fl.IntVar(&cfg.Replicas, "replicas", 1, "number of replicas (in a cluster)")
	fl.BoolVar(&cfg.Compression, "compress", false, "compress the bucket on disk (S2)")
	fl.Var(newDuration(&cfg.LimitMarkerTTL, 0), "marker-ttl", "enable per-key TTLs and keep expiry markers this long (≥ 1s)")
	return c
}

func (a *app) printBucketStatus(st *kv.Status) error {
	if a.json {
		return a.printJSON(map[string]any{
			"bucket": st.Bucket, "values": st.Values, "history": st.History, "ttl": jsonDuration(st.TTL),
			"bytes": st.Bytes, "compressed": st.Compressed, "stream": st.StreamInfo,
		})
	}
	s := &section{title: "Bucket " + st.Bucket + ":"}
	s.addIf("Description", st.Config.Description)
	s.add("Values", commas(st.Values))
	s.add("History", strconv.FormatInt(st.History, 10))
	s.add("TTL", humanDuration(st.TTL, "forever"))
	s.add("Size", humanBytes(st.Bytes))
	s.add("Maximum size", limit(st.Config.MaxBytes, true))
	s.add("Maximum value size", limit(st.Config.MaxValueSize, true))
	s.add("Storage", string(orDefault(st.Config.Storage, jsapi.StorageFile)))
	s.add("Compressed", yesNo(st.Compressed))
	if st.LimitMarkerTTL > 0 {
		s.add("Limit marker TTL", humanDuration(st.LimitMarkerTTL, "-"))
	}
	if st.StreamInfo != nil {
		s.add("Stream", st.StreamInfo.Config.Name)
	}
	a.sections(s)
	return nil
}

func (a *app) kvPutCmd() *cobra.Command {
	var create bool
	var revision uint64
	c := &cobra.Command{
		Use:   "put BUCKET KEY [VALUE]",
		Short: "Store a value under a key",
		Long: `Store VALUE under KEY in BUCKET and print the new revision. Without VALUE it
is read from stdin. --create stores only when the key has no value;
--revision only when the key's latest revision is that one (compare and set).`,
		Example: `  natsio kv put config color blue
  cat settings.json | natsio kv put config settings
  natsio kv put config color red --revision 3
  natsio kv put config lock me --create`,
		Args: rangeArgs(2, 3),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			bucket, key := args[0], args[1]
			if create && changed(c, "revision") {
				return usageError{err: errors.New("--create and --revision exclude each other"), cmd: c}
			}
			nc, b, value, err := a.bindKeyValue(ctx, bucket, key, args)
			if err != nil {
				return err
			}
			defer nc.Close()
			var rev uint64
			switch {
			case create:
				rev, err = b.Create(ctx, key, value)
				if errors.Is(err, kv.ErrKeyExists) {
					return userError{msg: fmt.Sprintf("key %q already has a value in bucket %s", key, bucket),
						hint: "drop --create to overwrite it", err: err}
				}
			case changed(c, "revision"):
				rev, err = b.Update(ctx, key, value, revision)
				if errors.Is(err, kv.ErrRevisionMismatch) {
					return notAtRevision(err, bucket, key, revision)
				}
			default:
				rev, err = b.Put(ctx, key, value)
			}
			if err != nil {
				return bucketErr(err, bucket, key)
			}
			return a.printStored(bucket, key, rev)
		},
	}
	c.Flags().BoolVar(&create, "create", false, "store only if the key has no value")
	c.Flags().Uint64Var(&revision, "revision", 0, "store only if the key's latest revision is this one")
	return c
}

// jsonEntry is the JSON form of a KV entry.
type jsonEntry struct {
	Bucket    string    `json:"bucket"`
	Key       string    `json:"key"`
	Revision  uint64    `json:"revision"`
	Operation string    `json:"operation"`
	Created   time.Time `json:"created"`
	Data      *string   `json:"value,omitempty"`
	Data64    string    `json:"value_base64,omitempty"`
	Delta     uint64    `json:"delta,omitempty"`
}

func newJSONEntry(e *kv.Entry) jsonEntry {
	m := newJSONMsg("", "", nil, e.Value)
	return jsonEntry{Bucket: e.Bucket, Key: e.Key, Revision: e.Revision, Operation: e.Operation.String(),
		Created: e.Created, Data: m.Data, Data64: m.DataBase64, Delta: e.Delta}
}

func (a *app) kvGetCmd() *cobra.Command {
	var (
		revision uint64
		raw      bool
	)
	c := &cobra.Command{
		Use:   "get BUCKET KEY",
		Short: "Print the value of a key",
		Example: `  natsio kv get config color
  natsio kv get config color --raw
  natsio kv get config color --revision 2`,
		Args: exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			bucket, key := args[0], args[1]
			nc, b, err := a.bindKey(ctx, bucket, key)
			if err != nil {
				return err
			}
			defer nc.Close()
			var e *kv.Entry
			if revision > 0 {
				e, err = b.GetRevision(ctx, key, revision)
			} else {
				e, err = b.Get(ctx, key)
			}
			if err != nil {
				return bucketErr(err, bucket, key)
			}
			switch {
			case a.json:
				return a.printJSON(newJSONEntry(e))
			case raw:
				_, err := a.stdout.Write(e.Value)
				return err
			}
			fmt.Fprintf(a.stderr, "%s > %s revision %d, created %s\n", bucket, key, e.Revision, ago(e.Created))
			writeBody(a.stdout, e.Value)
			return nil
		},
	}
	c.Flags().Uint64Var(&revision, "revision", 0, "get this revision instead of the latest")
	c.Flags().BoolVarP(&raw, "raw", "r", false, "print only the value, unchanged")
	return c
}

func (a *app) kvDelCmd() *cobra.Command {
	var purge, force bool
	c := &cobra.Command{
		Use:     "del BUCKET [KEY]",
		Aliases: []string{"rm", "delete"},
		Short:   "Delete a key, or a whole bucket",
		Long: `Delete KEY from BUCKET: a delete marker is written and the history is kept
(--purge also removes the history). Without KEY, delete the whole bucket with
all its keys; on a terminal that asks for confirmation unless --force.`,
		Example: `  natsio kv del config color
  natsio kv del config color --purge
  natsio kv del config --force`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			bucket := args[0]
			if len(args) == 1 {
				return a.kvDeleteBucket(c, bucket, force)
			}
			key := args[1]
			nc, b, err := a.bindKey(ctx, bucket, key)
			if err != nil {
				return err
			}
			defer nc.Close()
			what := "Deleted"
			if purge {
				err, what = b.Purge(ctx, key), "Purged"
			} else {
				err = b.Delete(ctx, key)
			}
			if err != nil {
				return bucketErr(err, bucket, key)
			}
			if a.json {
				return a.printJSON(map[string]any{"bucket": bucket, "key": key, "purged": purge})
			}
			fmt.Fprintf(a.stdout, "%s %s > %s\n", what, bucket, key)
			return nil
		},
	}
	c.Flags().BoolVar(&purge, "purge", false, "remove the key's history too")
	c.Flags().BoolVarP(&force, "force", "f", false, "do not ask for confirmation")
	return c
}

// kvDeleteBucket deletes a bucket with all its keys.
func (a *app) kvDeleteBucket(c *cobra.Command, bucket string, force bool) error {
	ctx := c.Context()
	if err := kv.ValidateBucketName(bucket); err != nil {
		return bucketErr(err, bucket, "")
	}
	if err := a.confirmed(force, "not deleted", "Delete bucket %s with all its keys?", bucket); err != nil {
		return err
	}
	nc, js, err := a.jetstream(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := kv.DeleteBucket(ctx, js, bucket); err != nil {
		return bucketErr(err, bucket, "")
	}
	if a.json {
		return a.printJSON(map[string]any{"deleted": bucket})
	}
	fmt.Fprintf(a.stdout, "Bucket %s deleted\n", bucket)
	return nil
}

func (a *app) kvWatchCmd() *cobra.Command {
	var (
		history     bool
		updatesOnly bool
		count       int
		revision    uint64
	)
	c := &cobra.Command{
		Use:   "watch BUCKET [KEY]",
		Short: "Print changes to a bucket's keys as they happen",
		Long: `Print the current value of each key of BUCKET (or of those matching KEY,
which may hold * and > wildcards), then every change as it is written, until
--count entries were printed or Ctrl-C. "Watching … (initial values done)" is
printed on stderr once the current values have been printed.`,
		Example: `  natsio kv watch config
  natsio kv watch config 'feature.>'
  natsio kv watch config --updates-only
  natsio kv watch config --json`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			bucket, filter := args[0], ">"
			if len(args) == 2 {
				filter = args[1]
			}
			if history && updatesOnly {
				return usageError{err: errors.New("--history and --updates-only exclude each other"), cmd: c}
			}
			var opts []kv.WatchOpt
			if history {
				opts = append(opts, kv.IncludeHistory())
			}
			if updatesOnly {
				opts = append(opts, kv.UpdatesOnly())
			}
			if revision > 0 {
				if history || updatesOnly {
					return usageError{err: errors.New("--revision excludes --history and --updates-only"), cmd: c}
				}
				opts = append(opts, kv.ResumeFromRevision(revision))
			}
			nc, _, b, err := a.bindBucket(ctx, bucket)
			if err != nil {
				return err
			}
			defer nc.Close()
			n := 0
			for e, err := range b.Watch(ctx, filter, opts...) {
				if err != nil {
					if ctx.Err() != nil { // Ctrl-C: a clean end
						return nil
					}
					return bucketErr(err, bucket, filter)
				}
				if e == nil {
					fmt.Fprintf(a.stderr, "Watching bucket %s, keys %q (initial values done)\n", bucket, filter)
					continue
				}
				n++
				if a.json {
					a.printJSONLine(newJSONEntry(e))
				} else {
					fmt.Fprintf(a.stdout, "[%s] %s %s > %s (revision %d)", e.Created.Local().Format("2006-01-02 15:04:05"),
						e.Operation, bucket, e.Key, e.Revision)
					if e.Operation == kv.OpPut {
						fmt.Fprintf(a.stdout, ": %s\n", e.Value)
					} else {
						fmt.Fprintln(a.stdout)
					}
				}
				if count > 0 && n >= count {
					return nil
				}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&history, "history", false, "print every kept revision first, not only the latest")
	c.Flags().BoolVar(&updatesOnly, "updates-only", false, "print only changes made from now on")
	c.Flags().BoolVar(&updatesOnly, "updates", false, "the same as --updates-only (the nats CLI's name)")
	c.Flags().Uint64Var(&revision, "revision", 0, "start at this revision of the bucket (every change from it on)")
	c.Flags().IntVarP(&count, "count", "c", 0, "exit after this many entries (0: until Ctrl-C)")
	return c
}

func (a *app) kvLsCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "ls [BUCKET]",
		Aliases: []string{"list"},
		Short:   "List buckets, or the keys of a bucket",
		Example: `  natsio kv ls           # buckets
  natsio kv ls config    # keys of the bucket config`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			if len(args) == 1 {
				bucket := args[0]
				nc, _, b, err := a.bindBucket(ctx, bucket)
				if err != nil {
					return err
				}
				defer nc.Close()
				keys, err := b.Keys(ctx)
				if err != nil {
					return bucketErr(err, bucket, "")
				}
				if a.json {
					return a.printJSON(nonNil(keys))
				}
				if len(keys) == 0 {
					fmt.Fprintf(a.stderr, "Bucket %s has no keys\n", bucket)
				}
				for _, k := range keys {
					fmt.Fprintln(a.stdout, k)
				}
				return nil
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			var list []*kv.Status
			for st, err := range kv.Buckets(ctx, js) {
				if err != nil {
					return err
				}
				list = append(list, st)
			}
			if a.json {
				out := []map[string]any{}
				for _, st := range list {
					out = append(out, map[string]any{"bucket": st.Bucket, "values": st.Values, "history": st.History,
						"ttl": jsonDuration(st.TTL), "bytes": st.Bytes})
				}
				return a.printJSON(out)
			}
			if len(list) == 0 {
				fmt.Fprintln(a.stderr, "No key-value buckets; create one with `natsio kv add BUCKET`")
				return nil
			}
			rows := make([][]string, 0, len(list))
			for _, st := range list {
				rows = append(rows, []string{st.Bucket, commas(st.Values), strconv.FormatInt(st.History, 10),
					humanDuration(st.TTL, "forever"), humanBytes(st.Bytes), orDash(st.Config.Description)})
			}
			a.table([]string{"BUCKET", "VALUES", "HISTORY", "TTL", "SIZE", "DESCRIPTION"}, rows)
			return nil
		},
	}
}

func (a *app) kvHistoryCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "history BUCKET KEY",
		Short: "Show every kept revision of a key",
		Example: `  natsio kv history config color
  natsio kv history config 'feature.>' --json`,
		Args: exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			bucket, key := args[0], args[1]
			nc, _, b, err := a.bindBucket(ctx, bucket)
			if err != nil {
				return err
			}
			defer nc.Close()
			es, err := b.History(ctx, key)
			if err != nil {
				return bucketErr(err, bucket, key)
			}
			if a.json {
				out := make([]jsonEntry, 0, len(es))
				for _, e := range es {
					out = append(out, newJSONEntry(e))
				}
				return a.printJSON(out)
			}
			rows := make([][]string, 0, len(es))
			for _, e := range es {
				v := string(e.Value)
				if len(v) > 60 {
					v = v[:57] + "..."
				}
				rows = append(rows, []string{e.Key, strconv.FormatUint(e.Revision, 10), e.Operation.String(),
					e.Created.Local().Format("2006-01-02 15:04:05"), strconv.Itoa(len(e.Value)), v})
			}
			a.table([]string{"KEY", "REVISION", "OP", "CREATED", "LENGTH", "VALUE"}, rows)
			return nil
		},
	}
}

func (a *app) kvInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "info BUCKET",
		Aliases: []string{"view", "status"},
		Short:   "Show a bucket's configuration and state",
		Example: `  natsio kv info config
  natsio kv info config --json`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			nc, _, b, err := a.bindBucket(ctx, args[0])
			if err != nil {
				return err
			}
			defer nc.Close()
			st, err := b.Status(ctx)
			if err != nil {
				return bucketErr(err, args[0], "")
			}
			return a.printBucketStatus(st)
		},
	}
}

// kvValue is VALUE from the arguments, or stdin when it was not given.
func (a *app) kvValue(args []string, i int) ([]byte, error) {
	if len(args) > i {
		return []byte(args[i]), nil
	}
	if stdinIsTerminal() {
		fmt.Fprintln(a.stderr, "reading the value from stdin; end it with Ctrl-D")
	}
	v, err := io.ReadAll(a.stdin)
	if err != nil {
		return nil, fmt.Errorf("reading the value from stdin: %w", err)
	}
	return v, nil
}

// printStored reports a stored value's new revision.
func (a *app) printStored(bucket, key string, rev uint64) error {
	if a.json {
		return a.printJSON(map[string]any{"bucket": bucket, "key": key, "revision": rev})
	}
	fmt.Fprintf(a.stdout, "Stored %s > %s, revision %d\n", bucket, key, rev)
	return nil
}

// notAtRevision explains a compare-and-set write refused because the key
// moved past revision.
func notAtRevision(err error, bucket, key string, revision uint64) error {
	return userError{msg: fmt.Sprintf("key %q is not at revision %d", key, revision),
		hint: fmt.Sprintf("read the current revision with `natsio kv get %s %s`", bucket, key), err: err}
}
