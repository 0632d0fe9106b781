package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/objstore"
)

func (a *app) objectCmd() *cobra.Command {
	c := group("object", "Use JetStream object stores (files of any size)",
		`Object stores keep files of any size as chunks on a stream named
OBJ_<store>, with a SHA-256 digest checked on every read. Transfers stream
through a small buffer, so memory does not grow with the file, and draw a
progress bar on stderr when it is a terminal. They are compatible with the
object stores of the nats CLI and nats.go.`,
		`  natsio object add files
  natsio object put files ./report.pdf
  natsio object ls files
  natsio object get files report.pdf --output /tmp/report.pdf
  natsio object info files report.pdf
  natsio object watch files
  natsio object seal files --force
  natsio object rm files report.pdf`,
		a.objectAddCmd(), a.objectPutCmd(), a.objectGetCmd(), a.objectLsCmd(), a.objectInfoCmd(), a.objectWatchCmd(),
		a.objectSealCmd(), a.objectRmCmd())
	c.PersistentFlags().Var(newEnum(&a.progress, "auto", "auto", "always", "never"), "progress", "draw a progress bar on stderr")
	return c
}

// storeErr names a missing store or object, or an invalid name, in err.
func storeErr(err error, store, object string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, objstore.ErrBucketNotFound), errors.Is(err, jsapi.ErrStreamNotFound):
		return userError{msg: fmt.Sprintf("object store %q not found", store),
			hint: "list stores with `natsio object ls`, or create it with `natsio object add " + store + "`", err: err}
	case errors.Is(err, objstore.ErrInvalidStoreName):
		return userError{msg: fmt.Sprintf("invalid object store name %q", store),
			hint: "store names use letters, digits, '-' and '_'", err: err}
	case errors.Is(err, jsapi.ErrStreamSealed):
		return userError{msg: fmt.Sprintf("object store %q is sealed: it cannot be changed", store), err: err}
	case errors.Is(err, objstore.ErrObjectNotFound):
		return userError{msg: fmt.Sprintf("object %q not found in store %s", object, store),
			hint: "list objects with `natsio object ls " + store + "`", err: err}
	case errors.Is(err, objstore.ErrDigestMismatch), errors.Is(err, objstore.ErrSizeMismatch):
		return userError{msg: fmt.Sprintf("object %q of store %s is corrupt: %s", object, store, trimPrefixes(err)),
			hint: "the data read does not match the stored digest; nothing was written; put the object again", err: err}
	}
	return err
}

// bindStore connects and binds the store; the caller closes the
// connection.
func (a *app) bindStore(ctx context.Context, store string) (*conn.Conn, *objstore.Store, error) {
	if err := objstore.ValidateStoreName(store); err != nil {
		return nil, nil, storeErr(err, store, "")
	}
	nc, js, err := a.jetstream(ctx)
	if err != nil {
		return nil, nil, err
	}
	s, err := objstore.Bind(ctx, js, store)
	if err != nil {
		nc.Close()
		return nil, nil, storeErr(err, store, "")
	}
	return nc, s, nil
}

func (a *app) objectAddCmd() *cobra.Command {
	var (
		cfg      objstore.Config
		storage  string
		maxBytes int64
	)
	c := &cobra.Command{
		Use:     "add STORE",
		Aliases: []string{"create"},
		Short:   "Create an object store",
		Example: `  natsio object add files
  natsio object add cache --ttl 24h --storage memory --max-bytes 1GiB`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			cfg.Bucket = args[0]
			cfg.Storage = jsapi.StorageType(storage)
			if maxBytes > 0 {
				cfg.MaxBytes = maxBytes
			}
			if err := objstore.ValidateStoreName(cfg.Bucket); err != nil {
				return storeErr(err, cfg.Bucket, "")
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			s, err := objstore.CreateStore(ctx, js, cfg)
			if err != nil {
				if errors.Is(err, objstore.ErrBucketExists) {
					return userError{msg: fmt.Sprintf("object store %q already exists with another configuration", cfg.Bucket),
						hint: "remove it first with `natsio object rm " + cfg.Bucket + "`, or pick another name", err: err}
				}
				return err
			}
			st, err := s.Status(ctx)
			if err != nil {
				return err
			}
			if !a.json {
				fmt.Fprintf(a.stdout, "Object store %s created\n\n", cfg.Bucket)
			}
			return a.printStoreStatus(st)
		},
	}
	fl := c.Flags()
	fl.StringVar(&cfg.Description, "description", "", "description")
	fl.Var(newDuration(&cfg.TTL, 0), "ttl", "remove objects this long after they are written (0: never)")
	fl.Var(newSize(&maxBytes, -1), "max-bytes", "largest size of the store (-1: unlimited)")
	fl.Var(sizeValue{&maxBytes}, "max-bucket-size", "the same as --max-bytes (the nats CLI's name)")
	fl.Var(newEnum(&storage, "file", "file", "memory"), "storage", "where objects are stored")
	fl.IntVar(&cfg.Replicas, "replicas", 1, "number of replicas (in a cluster)")
	fl.BoolVar(&cfg.Compression, "compress", false, "compress the store on disk (S2)")
	return c
}

func (a *app) printStoreStatus(st *objstore.Status) error {
	if a.json {
		return a.printJSON(map[string]any{"store": st.Bucket, "description": st.Description, "ttl": jsonDuration(st.TTL),
			"storage": st.Storage, "replicas": st.Replicas, "sealed": st.Sealed, "size": st.Size, "compressed": st.Compressed})
	}
	s := &section{title: "Object store " + st.Bucket + ":"}
	s.addIf("Description", st.Description)
	s.add("Size", humanBytes(st.Size))
	s.add("TTL", humanDuration(st.TTL, "forever"))
	s.add("Storage", string(orDefault(st.Storage, jsapi.StorageFile)))
	s.add("Replicas", strconv.Itoa(max(st.Replicas, 1)))
	s.add("Compressed", yesNo(st.Compressed))
	s.add("Sealed", yesNo(st.Sealed))
	if st.StreamInfo != nil {
		s.add("Stream", st.StreamInfo.Config.Name)
	}
	a.sections(s)
	return nil
}

func (a *app) objectPutCmd() *cobra.Command {
	var (
		name        string
		description string
		chunk       int64
		headers     []string
		force       bool
	)
	c := &cobra.Command{
		Use:   "put STORE FILE",
		Short: "Store a file as an object",
		Long: `Store FILE (or stdin with "-") in STORE as the object --name, by default the
file's base name, replacing an object of that name. The data is streamed in
chunks; the object appears only once all of it is stored.`,
		Example: `  natsio object put files ./report.pdf
  natsio object put files ./build/app.tar.gz --name releases/app-1.2.tar.gz
  pg_dump db | natsio object put files - --name backups/db.sql`,
		Args: exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			store, path := args[0], args[1]
			var (
				r    io.Reader
				size int64 = -1
			)
			if path == "-" {
				if name == "" {
					return usageError{err: errors.New("reading stdin needs --name"), cmd: c}
				}
				r = a.stdin
			} else {
				f, err := os.Open(path)
				if err != nil {
					return userError{msg: "cannot read " + path + ": " + errors.Unwrap(err).Error(), hint: "check the file's path", err: err}
				}
				defer f.Close()
				fi, err := f.Stat()
				if err != nil {
					return err
				}
				if fi.IsDir() {
					return userError{msg: path + " is a directory", hint: "put files one at a time, or archive the directory first (tar)"}
				}
				size, r = fi.Size(), f
				if name == "" {
					name = filepath.Base(path)
				}
			}
			meta := objstore.Meta{Name: name, Description: description}
			h, err := parseHeaders(c, headers)
			if err != nil {
				return err
			}
			if h != nil {
				meta.Headers = *h
			}
			if chunk > 0 {
				meta.Opts = &objstore.MetaOptions{ChunkSize: uint32(min(chunk, 1<<31))}
			}
			nc, s, err := a.bindStore(ctx, store)
			if err != nil {
				return err
			}
			defer nc.Close()
			if !force && stdinIsTerminal() && a.stdin == os.Stdin {
				if old, err := s.GetInfo(ctx, name); err == nil && !old.Deleted {
					if err := a.confirmed(false, "not replaced", "Replace object %s (%s) in store %s?", name, humanBytes(old.Size), store); err != nil {
						return err
					}
				}
			}
			bar := a.newBar(size, "put "+name, true)
			start := time.Now()
			info, err := s.Put(ctx, meta, io.TeeReader(r, bar))
			bar.Finish()
			bar.Clear()
			if err != nil {
				return storeErr(err, store, name)
			}
			if a.json {
				return a.printJSON(info)
			}
			el := time.Since(start)
			fmt.Fprintf(a.stdout, "Stored %s in %s: %s in %d chunk(s) in %s (%s/s)\n", info.Name, store, humanBytes(info.Size),
				info.Chunks, humanDuration(el, "0s"), humanBytes(int64(float64(info.Size)/max(el.Seconds(), 1e-9))))
			fmt.Fprintf(a.stdout, "Digest: %s\n", info.Digest)
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&name, "name", "", "object name (default: the file's base name)")
	fl.StringVar(&description, "description", "", "object description")
	fl.Var(newSize(&chunk, 0), "chunk-size", "chunk size (default 128KiB)")
	fl.StringArrayVarP(&headers, "header", "H", nil, "object header KEY:VALUE (repeatable)")
	fl.BoolVarP(&force, "force", "f", false, "replace an existing object without asking (asked only on a terminal)")
	return c
}

// digestOf formats a SHA-256 sum as the object store writes it.
func digestOf(sum []byte) string {
	return "SHA-256=" + base64.URLEncoding.EncodeToString(sum)
}

func (a *app) objectGetCmd() *cobra.Command {
	var (
		output string
		force  bool
	)
	c := &cobra.Command{
		Use:   "get STORE NAME",
		Short: "Read an object into a file",
		Long: `Read the object NAME of STORE into --output (by default a file named after
the object's base name in the current directory; "-" for stdout). The data
goes to a temporary file that replaces the output only once its SHA-256
digest has been verified, so a failed or corrupt read leaves nothing behind.
An existing output file is replaced only with --force.`,
		Example: `  natsio object get files report.pdf
  natsio object get files releases/app-1.2.tar.gz --output app.tar.gz
  natsio object get files backups/db.sql --output - | psql db`,
		Args: exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			store, name := args[0], args[1]
			if output == "" {
				output = filepath.Base(name)
			}
			if output != "-" && !force {
				if _, err := os.Stat(output); err == nil {
					return userError{msg: output + " already exists", hint: "pass --force to replace it, or choose another --output"}
				}
			}
			nc, s, err := a.bindStore(ctx, store)
			if err != nil {
				return err
			}
			defer nc.Close()
			rd, err := s.Get(ctx, name)
			if err != nil {
				return storeErr(err, store, name)
			}
			defer rd.Close()
			info := rd.Info()

			var (
				w   io.Writer = a.stdout
				tmp *os.File
			)
			if output != "-" {
				tmp, err = createOutput(output)
				if err != nil {
					return userError{msg: "cannot write " + output + ": " + err.Error(), hint: "choose a writable --output", err: err}
				}
				defer func() {
					if tmp != nil {
						tmp.Close()
						os.Remove(tmp.Name())
					}
				}()
				w = tmp
			}
			h := sha256.New()
			bar := a.newBar(int64(info.Size), "get "+name, true)
			start := time.Now()
			n, err := io.Copy(io.MultiWriter(w, h, bar), rd)
			bar.Finish()
			bar.Clear()
			if err != nil {
				return storeErr(err, store, name)
			}
			// The reader checked size and digest at its end; check again
			// what was written.
			if got := digestOf(h.Sum(nil)); uint64(n) != info.Size || strings.TrimRight(got, "=") != strings.TrimRight(info.Digest, "=") {
				return userError{msg: fmt.Sprintf("object %q of store %s is corrupt: read %d bytes with %s, want %d bytes with %s", name, store, n, got, info.Size, info.Digest),
					hint: "nothing was written; put the object again"}
			}
			if tmp != nil {
				if err := tmp.Close(); err != nil {
					return err
				}
				if err := os.Rename(tmp.Name(), output); err != nil {
					return err
				}
				tmp = nil
			}
			el := time.Since(start)
			switch {
			case a.json && output != "-":
				return a.printJSON(map[string]any{"store": store, "name": name, "output": output, "size": n, "digest": info.Digest, "verified": true})
			case output != "-":
				fmt.Fprintf(a.stdout, "Wrote %s (%s) to %s in %s (%s/s); digest %s verified\n", name, humanBytes(n), output,
					humanDuration(el, "0s"), humanBytes(int64(float64(n)/max(el.Seconds(), 1e-9))), info.Digest)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", `file to write ("-" for stdout; default: the object's base name)`)
	c.Flags().BoolVarP(&force, "force", "f", false, "replace an existing output file")
	return c
}

// createOutput creates the temporary file that will replace path, with
// the permissions os.Create would give path: those of the file it
// replaces, or 0666 less the umask for a new one (os.CreateTemp's are
// 0600).
func createOutput(path string) (*os.File, error) {
	perm, keep := os.FileMode(0o666), false
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		perm, keep = fi.Mode().Perm(), true
	}
	dir, base := filepath.Dir(path), "."+filepath.Base(path)+".natsio-"
	for range 1000 {
		f, err := os.OpenFile(filepath.Join(dir, base+strconv.FormatUint(rand.Uint64(), 36)), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil && keep {
			// The replaced file's bits as they are, not narrowed by the umask.
			if err = f.Chmod(perm); err != nil {
				f.Close()
				os.Remove(f.Name())
				return nil, err
			}
		}
		return f, err
	}
	return nil, fmt.Errorf("no free temporary file name in %s", dir)
}

func (a *app) objectLsCmd() *cobra.Command {
	var deleted bool
	c := &cobra.Command{
		Use:     "ls [STORE]",
		Aliases: []string{"list"},
		Short:   "List object stores, or the objects of a store",
		Example: `  natsio object ls          # stores
  natsio object ls files    # objects of the store files`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			if len(args) == 0 {
				return a.listStores(ctx)
			}
			store := args[0]
			nc, s, err := a.bindStore(ctx, store)
			if err != nil {
				return err
			}
			defer nc.Close()
			var opts []objstore.Opt
			if deleted {
				opts = append(opts, objstore.ShowDeleted())
			}
			var infos []*objstore.Info
			for info, err := range s.List(ctx, opts...) {
				if err != nil {
					return storeErr(err, store, "")
				}
				infos = append(infos, info)
			}
			if a.json {
				return a.printJSON(nonNil(infos))
			}
			if len(infos) == 0 {
				fmt.Fprintf(a.stderr, "Object store %s is empty; add files with `natsio object put %s FILE`\n", store, store)
				return nil
			}
			rows := make([][]string, 0, len(infos))
			for _, i := range infos {
				size := humanBytes(i.Size)
				switch {
				case i.Deleted:
					size = "deleted"
				case i.IsLink():
					size = "link to " + i.Opts.Link.Bucket + "/" + i.Opts.Link.Name
				}
				rows = append(rows, []string{i.Name, size, strconv.FormatUint(uint64(i.Chunks), 10),
					i.ModTime.Local().Format("2006-01-02 15:04:05"), orDash(i.Description)})
			}
			a.table([]string{"NAME", "SIZE", "CHUNKS", "MODIFIED", "DESCRIPTION"}, rows)
			return nil
		},
	}
	c.Flags().BoolVar(&deleted, "deleted", false, "list deleted objects too")
	return c
}

func (a *app) listStores(ctx context.Context) error {
	nc, js, err := a.jetstream(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	var list []*objstore.Status
	for st, err := range objstore.Stores(ctx, js) {
		if err != nil {
			return err
		}
		list = append(list, st)
	}
	if a.json {
		out := []map[string]any{}
		for _, st := range list {
			out = append(out, map[string]any{"store": st.Bucket, "size": st.Size, "ttl": jsonDuration(st.TTL), "description": st.Description})
		}
		return a.printJSON(out)
	}
	if len(list) == 0 {
		fmt.Fprintln(a.stderr, "No object stores; create one with `natsio object add STORE`")
		return nil
	}
	rows := make([][]string, 0, len(list))
	for _, st := range list {
		rows = append(rows, []string{st.Bucket, humanBytes(st.Size), humanDuration(st.TTL, "forever"),
			string(orDefault(st.Storage, jsapi.StorageFile)), orDash(st.Description)})
	}
	a.table([]string{"STORE", "SIZE", "TTL", "STORAGE", "DESCRIPTION"}, rows)
	return nil
}

func (a *app) objectInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info STORE [NAME]",
		Short: "Show an object's or a store's information",
		Example: `  natsio object info files report.pdf
  natsio object info files`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			store := args[0]
			nc, s, err := a.bindStore(ctx, store)
			if err != nil {
				return err
			}
			defer nc.Close()
			if len(args) == 1 {
				st, err := s.Status(ctx)
				if err != nil {
					return storeErr(err, store, "")
				}
				return a.printStoreStatus(st)
			}
			info, err := s.GetInfo(ctx, args[1])
			if err != nil {
				return storeErr(err, store, args[1])
			}
			if a.json {
				return a.printJSON(info)
			}
			sec := &section{title: "Object " + info.Name + ":"}
			sec.add("Store", info.Bucket)
			sec.addIf("Description", info.Description)
			sec.add("Size", fmt.Sprintf("%s (%s bytes)", humanBytes(info.Size), commas(info.Size)))
			sec.add("Chunks", strconv.FormatUint(uint64(info.Chunks), 10))
			if info.Opts != nil && info.Opts.ChunkSize > 0 {
				sec.add("Chunk size", humanBytes(int64(info.Opts.ChunkSize)))
			}
			sec.add("Modified", ago(info.ModTime))
			sec.add("SHA-256 digest", orDash(info.Digest))
			if info.IsLink() {
				sec.add("Link to", info.Opts.Link.Bucket+"/"+info.Opts.Link.Name)
			}
			shown := map[string]bool{}
			for k := range info.Headers.All() {
				if !shown[k] {
					shown[k] = true
					sec.add("Header "+k, strings.Join(slices.Collect(info.Headers.Values(k)), ", "))
				}
			}
			for k, v := range info.Metadata {
				sec.add("Metadata "+k, v)
			}
			a.sections(sec)
			return nil
		},
	}
}

func (a *app) objectRmCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:     "rm STORE [NAME]",
		Aliases: []string{"delete", "del"},
		Short:   "Delete an object, or a whole store",
		Long: `Delete the object NAME of STORE, or without NAME the whole store with all its
objects. On a terminal it asks for confirmation unless --force.`,
		Example: `  natsio object rm files report.pdf
  natsio object rm files --force    # the whole store`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			store := args[0]
			if len(args) == 1 {
				if err := objstore.ValidateStoreName(store); err != nil {
					return storeErr(err, store, "")
				}
				if err := a.confirmed(force, "not deleted", "Delete object store %s with all its objects?", store); err != nil {
					return err
				}
				nc, js, err := a.jetstream(ctx)
				if err != nil {
					return err
				}
				defer nc.Close()
				if err := objstore.DeleteStore(ctx, js, store); err != nil {
					return storeErr(err, store, "")
				}
				if a.json {
					return a.printJSON(map[string]any{"deleted": store})
				}
				fmt.Fprintf(a.stdout, "Object store %s deleted\n", store)
				return nil
			}
			name := args[1]
			if err := a.confirmed(force, "not deleted", "Delete object %s from store %s?", name, store); err != nil {
				return err
			}
			nc, s, err := a.bindStore(ctx, store)
			if err != nil {
				return err
			}
			defer nc.Close()
			if err := s.Delete(ctx, name); err != nil {
				return storeErr(err, store, name)
			}
			if a.json {
				return a.printJSON(map[string]any{"store": store, "deleted": name})
			}
			fmt.Fprintf(a.stdout, "Deleted %s from %s\n", name, store)
			return nil
		},
	}
	c.Flags().BoolVarP(&force, "force", "f", false, "do not ask for confirmation")
	return c
}
