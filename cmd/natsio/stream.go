package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

func (a *app) streamCmd() *cobra.Command {
	return group("stream", "Manage JetStream streams",
		`Streams store the messages published on their subjects. Create them with
'stream add', change them with 'stream edit', inspect them with 'stream ls',
'stream info' and 'stream get', and empty or delete them with 'stream purge'
and 'stream rm'.`,
		`  natsio stream add ORDERS --subjects 'orders.>' --max-age 7d
  natsio stream ls
  natsio stream info ORDERS
  natsio stream view ORDERS
  natsio stream subjects ORDERS
  natsio stream get ORDERS 1
  natsio stream rmm ORDERS 1 --force
  natsio stream report
  natsio stream edit ORDERS --max-msgs 100000
  natsio stream purge ORDERS --subject orders.old
  natsio stream rm ORDERS --force`,
		a.streamAddCmd(), a.streamEditCmd(), a.streamInfoCmd(), a.streamLsCmd(), a.streamReportCmd(),
		a.streamViewCmd(), a.streamSubjectsCmd(), a.streamGetCmd(), a.streamRmmCmd(), a.streamPurgeCmd(), a.streamRmCmd())
}

// streamFlags are the configuration flags of stream add and edit.
type streamFlags struct {
	subjects          []string
	description       string
	storage           string
	retention         string
	replicas          int
	maxMsgs           int64
	maxBytes          int64
	maxAge            time.Duration
	maxMsgSize        int64
	maxMsgsPerSubject int64
	maxConsumers      int
	discard           string
	discardPerSubject bool
	dupeWindow        time.Duration
	allowDirect       bool
	allowRollup       bool
	allowTTL          bool
	markerTTL         time.Duration
	denyDelete        bool
	denyPurge         bool
	compression       string
	noAck             bool
	sealed            bool
	metadata          map[string]string
	config            string
	natscli           streamNatscli // the rest of natscli's flags
}

func (f *streamFlags) register(c *cobra.Command, edit bool) {
	fl := c.Flags()
	fl.StringSliceVar(&f.subjects, "subjects", nil, "subjects the stream captures, comma separated or repeated (default: the stream name)")
	fl.StringVar(&f.description, "description", "", "description")
	fl.Var(newEnum(&f.storage, "file", "file", "memory"), "storage", "where messages are stored")
	fl.Var(newEnum(&f.retention, "limits", "limits", "interest", "workqueue", "workq", "work"), "retention", "when messages are removed besides the limits (workq and work are workqueue)")
	fl.IntVar(&f.replicas, "replicas", 1, "number of replicas (in a cluster)")
	fl.Int64Var(&f.maxMsgs, "max-msgs", -1, "most messages kept (-1: unlimited)")
	fl.Var(newSize(&f.maxBytes, -1), "max-bytes", "most bytes kept, e.g. 1GiB (-1: unlimited)")
	fl.Var(newDuration(&f.maxAge, 0), "max-age", "oldest message kept, e.g. 24h or 7d (0: unlimited)")
	fl.Var(newSize(&f.maxMsgSize, -1), "max-msg-size", "largest message accepted (-1: unlimited)")
	fl.Int64Var(&f.maxMsgsPerSubject, "max-msgs-per-subject", -1, "most messages kept per subject (-1: unlimited)")
	fl.IntVar(&f.maxConsumers, "max-consumers", -1, "most consumers (-1: unlimited)")
	fl.Var(newEnum(&f.discard, "old", "old", "new"), "discard", "at a limit, remove old messages or refuse new ones")
	fl.BoolVar(&f.discardPerSubject, "discard-per-subject", false, "apply --discard new per subject (needs --max-msgs-per-subject)")
	fl.Var(newDuration(&f.dupeWindow, 2*time.Minute), "dupe-window", "window for duplicate detection by Nats-Msg-Id")
	fl.BoolVar(&f.allowDirect, "allow-direct", true, "allow Direct Get (fast reads from any replica)")
	fl.BoolVar(&f.allowRollup, "allow-rollup", false, "allow Nats-Rollup headers to purge subjects")
	fl.BoolVar(&f.allowTTL, "allow-ttl", false, "honour per-message TTLs (Nats-TTL)")
	fl.Var(newDuration(&f.markerTTL, 0), "marker-ttl", "leave delete markers with this TTL when limits remove a subject's last message (needs --allow-ttl)")
	fl.BoolVar(&f.denyDelete, "deny-delete", false, "refuse message deletes (cannot be undone)")
	fl.BoolVar(&f.denyPurge, "deny-purge", false, "refuse purges (cannot be undone)")
	fl.Var(newEnum(&f.compression, "none", "none", "s2"), "compression", "on-disk compression of file streams")
	fl.BoolVar(&f.noAck, "no-ack", false, "do not acknowledge publishes")
	fl.StringToStringVar(&f.metadata, "metadata", nil, "metadata KEY=VALUE pairs")
	if edit {
		fl.BoolVar(&f.sealed, "seal", false, "seal the stream: no more writes, deletes or purges (cannot be undone)")
	} else {
		fl.Bool("defaults", false, "accepted for nats CLI scripts: natsio never prompts for settings")
		fl.StringVar(&f.config, "config", "", "JSON file with a stream configuration (as 'stream info --json' prints under \"config\"); other flags override it")
	}
	f.natscli.register(c, f, edit)
}

// apply writes the flags into cfg: every flag when all is set (a new
// stream), otherwise only those given on the command line.
func (f *streamFlags) apply(c *cobra.Command, cfg *jsapi.StreamConfig, all bool) {
	set := func(name string) bool { return all || changed(c, name) }
	if set("subjects") {
		cfg.Subjects = f.subjects
	}
	if set("description") {
		cfg.Description = f.description
	}
	if set("storage") {
		cfg.Storage = jsapi.StorageType(f.storage)
	}
	if set("retention") {
		cfg.Retention = jsapi.RetentionPolicy(f.retention)
		if f.retention == "workq" || f.retention == "work" {
			cfg.Retention = jsapi.RetentionWorkQueue
		}
	}
	if set("replicas") {
		cfg.Replicas = f.replicas
	}
	if set("max-msgs") {
		cfg.MaxMsgs = f.maxMsgs
	}
	if set("max-bytes") {
		cfg.MaxBytes = f.maxBytes
	}
	if set("max-age") {
		cfg.MaxAge = f.maxAge
	}
	if set("max-msg-size") {
		cfg.MaxMsgSize = int32(min(f.maxMsgSize, 1<<31-1))
	}
	if set("max-msgs-per-subject") {
		cfg.MaxMsgsPerSubject = f.maxMsgsPerSubject
	}
	if set("max-consumers") {
		cfg.MaxConsumers = f.maxConsumers
	}
	if set("discard") {
		cfg.Discard = jsapi.DiscardPolicy(f.discard)
	}
	if set("discard-per-subject") {
		cfg.DiscardNewPerSubject = f.discardPerSubject
	}
	if set("dupe-window") {
		cfg.DuplicateWindow = f.dupeWindow
	}
	if set("allow-direct") {
		cfg.AllowDirect = f.allowDirect
	}
	if set("allow-rollup") {
		cfg.AllowRollup = f.allowRollup
	}
	if set("allow-ttl") {
		cfg.AllowMsgTTL = f.allowTTL
	}
	if set("marker-ttl") {
		cfg.SubjectDeleteMarkerTTL = f.markerTTL
	}
	if set("deny-delete") {
		cfg.DenyDelete = f.denyDelete
	}
	if set("deny-purge") {
		cfg.DenyPurge = f.denyPurge
	}
	if set("compression") {
		cfg.Compression = jsapi.Compression(f.compression)
	}
	if set("no-ack") {
		cfg.NoAck = f.noAck
	}
	if set("metadata") && f.metadata != nil {
		cfg.Metadata = f.metadata
	}
	if changed(c, "seal") {
		cfg.Sealed = f.sealed
	}
	f.natscli.apply(c, f, cfg, all)
}

func (a *app) streamAddCmd() *cobra.Command {
	var f streamFlags
	c := &cobra.Command{
		Use:     "add NAME",
		Aliases: []string{"create", "new"},
		Short:   "Create a stream",
		Long: `Create the stream NAME. The flags cover the common configuration; --config
loads a whole configuration from a JSON file (the flags given override it).
Without --subjects the stream captures the subject NAME. Adding a stream that
exists with the same configuration succeeds and changes nothing.`,
		Example: `  natsio stream add ORDERS --subjects 'orders.>'
  natsio stream add EVENTS --subjects 'events.*,audit.>' --storage memory --max-age 24h
  natsio stream add JOBS --subjects 'jobs.>' --retention workqueue --max-msgs 10000 --discard new
  natsio stream add CACHE --subjects 'cache.>' --max-msgs-per-subject 1 --allow-rollup --allow-ttl
  natsio stream add COPY --config stream.json`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			var cfg jsapi.StreamConfig
			if f.config != "" {
				b, err := os.ReadFile(f.config)
				if err != nil {
					return userError{msg: "reading --config: " + err.Error(), err: err}
				}
				if err := json.Unmarshal(b, &cfg); err != nil {
					return userError{msg: fmt.Sprintf("--config %s is not a stream configuration: %v", f.config, err),
						hint: "write it as the \"config\" object of `natsio stream info STREAM --json`", err: err}
				}
			}
			f.apply(c, &cfg, f.config == "")
			cfg.Name = args[0]
			if err := jsapi.ValidateName(cfg.Name); err != nil {
				return invalidName("stream", cfg.Name, err)
			}
			if done, err := a.addDone(&f.natscli.add, "Stream "+cfg.Name, cfg); done {
				return err
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			s, err := js.CreateStream(ctx, cfg)
			if err != nil {
				if errors.Is(err, jsapi.ErrStreamNameInUse) {
					return userError{msg: fmt.Sprintf("stream %q already exists with another configuration", cfg.Name),
						hint: fmt.Sprintf("change it with `natsio stream edit %s`, or remove it first with `natsio stream rm %s`", cfg.Name, cfg.Name), err: err}
				}
				return err
			}
			if !a.json {
				fmt.Fprintf(a.stdout, "Stream %s created\n\n", s.Name())
			}
			return a.printStreamInfo(s.CachedInfo())
		},
	}
	f.register(c, false)
	return c
}

func (a *app) streamEditCmd() *cobra.Command {
	var f streamFlags
	c := &cobra.Command{
		Use:     "edit NAME",
		Aliases: []string{"update"},
		Short:   "Change a stream's configuration",
		Long: `Change the configuration of the stream NAME: its current configuration is
read, the flags given are applied to it, and the result is written back, so
settings you do not name are kept. Some changes are refused by the server
(storage type, or undoing --deny-delete, --deny-purge, --seal).`,
		Example: `  natsio stream edit ORDERS --max-msgs 100000 --max-age 30d
  natsio stream edit ORDERS --subjects 'orders.>,returns.>'
  natsio stream edit ORDERS --allow-direct=false`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			name := args[0]
			if !anyChanged(c, "subjects", "description", "storage", "retention", "replicas", "max-msgs",
				"max-bytes", "max-age", "max-msg-size", "max-msgs-per-subject", "max-consumers", "discard", "discard-per-subject",
				"dupe-window", "allow-direct", "allow-rollup", "allow-ttl", "marker-ttl", "deny-delete", "deny-purge",
				"compression", "no-ack", "metadata", "seal") && !anyChanged(c, streamNatscliFlags...) && !f.natscli.edit.any() {
				return usageError{err: errors.New("nothing to change: give at least one configuration flag"), cmd: c}
			}
			if err := jsapi.ValidateName(name); err != nil {
				return invalidName("stream", name, err)
			}
			nc, js, s, err := a.bindStream(ctx, name)
			if err != nil {
				return err
			}
			defer nc.Close()
			cur := s.CachedInfo().Config
			cfg, err := editBase(a, &f.natscli.edit, "stream", cur)
			if err != nil {
				return err
			}
			f.apply(c, &cfg, false)
			cfg.Name = name
			if f.natscli.edit.dry {
				return a.printDiff("stream", cur, cfg)
			}
			s, err = js.UpdateStream(ctx, cfg)
			if err != nil {
				return streamErr(err, name)
			}
			if !a.json {
				fmt.Fprintf(a.stdout, "Stream %s updated\n\n", s.Name())
			}
			return a.printStreamInfo(s.CachedInfo())
		},
	}
	f.register(c, true)
	return c
}

// anyChanged reports whether any of the flags was given.
func anyChanged(c *cobra.Command, names ...string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return changed(c, n) })
}

// invalidName explains a name the server would refuse.
func invalidName(what, name string, err error) error {
	return userError{msg: fmt.Sprintf("invalid %s name %q", what, name),
		hint: "names may not be empty or hold spaces, '.', '*', '>', '/' or '\\'", err: err}
}

func (a *app) streamInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info NAME",
		Short: "Show a stream's configuration and state",
		Example: `  natsio stream info ORDERS
  natsio stream info ORDERS --json`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			nc, _, s, err := a.bindStream(ctx, args[0])
			if err != nil {
				return err
			}
			defer nc.Close()
			return a.printStreamInfo(s.CachedInfo())
		},
	}
}

// bindStream connects and looks the stream up; the caller closes the
// connection. A missing stream is a userError that says how to list or
// create streams.
func (a *app) bindStream(ctx context.Context, name string) (*conn.Conn, *jsapi.JS, *jsapi.Stream, error) {
	nc, js, err := a.jetstream(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := js.Stream(ctx, name)
	if err != nil {
		nc.Close()
		return nil, nil, nil, streamErr(err, name)
	}
	return nc, js, s, nil
}

func (a *app) printStreamInfo(si *jsapi.StreamInfo) error {
	if a.json {
		return a.printJSON(si)
	}
	cfg, st := si.Config, si.State
	conf := &section{title: "Configuration:"}
	conf.add("Name", cfg.Name)
	conf.addIf("Description", cfg.Description)
	conf.add("Subjects", orDash(strings.Join(cfg.Subjects, ", ")))
	conf.add("Created", ago(si.Created))
	conf.add("Storage", string(orDefault(cfg.Storage, jsapi.StorageFile)))
	conf.add("Retention", string(orDefault(cfg.Retention, jsapi.RetentionLimits)))
	conf.add("Replicas", strconv.Itoa(max(cfg.Replicas, 1)))
	conf.add("Discard policy", string(orDefault(cfg.Discard, jsapi.DiscardOld)))
	conf.add("Duplicate window", humanDuration(cfg.DuplicateWindow, "-"))
	conf.add("Maximum messages", limit(cfg.MaxMsgs, false))
	conf.add("Maximum per subject", limit(cfg.MaxMsgsPerSubject, false))
	conf.add("Maximum bytes", limit(cfg.MaxBytes, true))
	conf.add("Maximum age", humanDuration(cfg.MaxAge, "unlimited"))
	conf.add("Maximum message size", limit(cfg.MaxMsgSize, true))
	conf.add("Maximum consumers", limit(cfg.MaxConsumers, false))
	conf.add("Allows direct get", yesNo(cfg.AllowDirect))
	conf.add("Allows rollups", yesNo(cfg.AllowRollup))
	conf.add("Allows message TTL", yesNo(cfg.AllowMsgTTL))
	if cfg.SubjectDeleteMarkerTTL > 0 {
		conf.add("Delete marker TTL", humanDuration(cfg.SubjectDeleteMarkerTTL, "-"))
	}
	conf.add("Deny delete / purge", yesNo(cfg.DenyDelete)+" / "+yesNo(cfg.DenyPurge))
	if cfg.Compression != "" && cfg.Compression != jsapi.CompressionNone {
		conf.add("Compression", string(cfg.Compression))
	}
	if cfg.Sealed {
		conf.add("Sealed", "yes")
	}
	if cfg.NoAck {
		conf.add("Acknowledgements", "no")
	}
	if cfg.Mirror != nil {
		conf.add("Mirror of", cfg.Mirror.Name)
	}
	for _, src := range cfg.Sources {
		conf.add("Source", src.Name)
	}
	for k, v := range cfg.Metadata {
		if !strings.HasPrefix(k, "_nats.") {
			conf.add("Metadata "+k, v)
		}
	}

	state := &section{title: "State:"}
	state.add("Messages", commas(st.Msgs))
	state.add("Bytes", humanBytes(st.Bytes))
	if st.Msgs > 0 {
		state.add("First sequence", fmt.Sprintf("%d @ %s", st.FirstSeq, ago(st.FirstTime)))
		state.add("Last sequence", fmt.Sprintf("%d @ %s", st.LastSeq, ago(st.LastTime)))
	} else {
		state.add("First sequence", strconv.FormatUint(st.FirstSeq, 10))
		state.add("Last sequence", strconv.FormatUint(st.LastSeq, 10))
	}
	state.add("Deleted messages", strconv.Itoa(st.NumDeleted))
	state.add("Subjects", strconv.Itoa(st.NumSubjects))
	state.add("Consumers", strconv.Itoa(st.Consumers))
	if si.Cluster != nil && si.Cluster.Leader != "" {
		state.add("Cluster leader", si.Cluster.Leader)
	}
	a.sections(conf, state)
	return nil
}

// orDefault returns v, or def when v is empty.
func orDefault[T ~string](v, def T) T {
	if v == "" {
		return def
	}
	return v
}

func (a *app) streamLsCmd() *cobra.Command {
	var names bool
	var subject string
	c := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List streams",
		Example: `  natsio stream ls
  natsio stream ls --subject 'orders.>'
  natsio stream ls --names`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			if names {
				list, err := collect(js.StreamNames(ctx, subject))
				if err != nil {
					return err
				}
				if a.json {
					return a.printJSON(nonNil(list))
				}
				for _, n := range list {
					fmt.Fprintln(a.stdout, n)
				}
				return nil
			}
			infos, err := collect(js.Streams(ctx, subject))
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(nonNil(infos))
			}
			if len(infos) == 0 {
				fmt.Fprintln(a.stderr, "No streams defined; create one with `natsio stream add NAME --subjects SUBJECT`")
				return nil
			}
			rows := make([][]string, 0, len(infos))
			for _, si := range infos {
				last := "never"
				if si.State.Msgs > 0 {
					last = humanDuration(time.Since(si.State.LastTime).Round(time.Second), "0s") + " ago"
				}
				rows = append(rows, []string{si.Config.Name, orDash(strings.Join(si.Config.Subjects, ",")),
					string(orDefault(si.Config.Storage, jsapi.StorageFile)), commas(si.State.Msgs), humanBytes(si.State.Bytes),
					strconv.Itoa(si.State.Consumers), last})
			}
			a.table([]string{"NAME", "SUBJECTS", "STORAGE", "MESSAGES", "BYTES", "CONSUMERS", "LAST MESSAGE"}, rows)
			return nil
		},
	}
	c.Flags().BoolVarP(&names, "names", "n", false, "list only the names")
	c.Flags().StringVar(&subject, "subject", "", "only streams whose subjects overlap this one")
	return c
}

// nonNil returns s, or an empty slice so that JSON shows [] rather than
// null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (a *app) streamRmCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:     "rm NAME...",
		Aliases: []string{"delete", "del"},
		Short:   "Delete streams with their messages and consumers",
		Long: `Delete the named streams with all their messages and consumers. On a
terminal it asks for confirmation unless --force is given.`,
		Example: `  natsio stream rm ORDERS
  natsio stream rm ORDERS EVENTS --force`,
		Args: rangeArgs(1, 1<<30),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			if err := a.confirmed(force, "not deleted", "Delete stream(s) %s with all their messages?", strings.Join(args, ", ")); err != nil {
				return err
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			for _, name := range args {
				if err := js.DeleteStream(ctx, name); err != nil {
					if errors.Is(err, jsapi.ErrInvalidName) {
						return invalidName("stream", name, err)
					}
					return streamErr(err, name)
				}
				if !a.json {
					fmt.Fprintf(a.stdout, "Stream %s deleted\n", name)
				}
			}
			if a.json {
				return a.printJSON(map[string]any{"deleted": args})
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&force, "force", "f", false, "do not ask for confirmation")
	return c
}

// confirm asks a yes/no question on a terminal; without a terminal (in
// scripts) or with force it answers yes.
func (a *app) confirm(force bool, format string, args ...any) bool {
	if force || !stdinIsTerminal() || a.stdin != os.Stdin {
		return true
	}
	fmt.Fprintf(a.stderr, format+" [y/N] ", args...)
	line, _ := bufio.NewReader(a.stdin).ReadString('\n')
	line = strings.ToLower(strings.TrimSpace(line))
	return line == "y" || line == "yes"
}

// confirmed is confirm for a command that stops when the answer is no: it
// returns nil to go on, or a userError saying refusal ("not deleted") and
// how to skip the question.
func (a *app) confirmed(force bool, refusal, format string, args ...any) error {
	if a.confirm(force, format, args...) {
		return nil
	}
	return userError{msg: refusal, hint: "answer y, or pass --force"}
}

func (a *app) streamPurgeCmd() *cobra.Command {
	var (
		force   bool
		subject string
		seq     uint64
		keep    uint64
	)
	c := &cobra.Command{
		Use:   "purge NAME",
		Short: "Remove messages from a stream",
		Long: `Remove the messages of the stream NAME: all of them, or those on --subject,
or those below sequence --seq, or all but the newest --keep. The stream and
its configuration stay. On a terminal it asks for confirmation unless --force.`,
		Example: `  natsio stream purge ORDERS --force
  natsio stream purge ORDERS --subject orders.cancelled
  natsio stream purge ORDERS --keep 100
  natsio stream purge ORDERS --seq 5000`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			name := args[0]
			if changed(c, "seq") && changed(c, "keep") {
				return usageError{err: errors.New("--seq and --keep exclude each other"), cmd: c}
			}
			var opts []jsapi.PurgeOpt
			if subject != "" {
				opts = append(opts, jsapi.PurgeSubject(subject))
			}
			if changed(c, "seq") {
				opts = append(opts, jsapi.PurgeSequence(seq))
			}
			if changed(c, "keep") {
				opts = append(opts, jsapi.PurgeKeep(keep))
			}
			if err := a.confirmed(force, "not purged", "Purge messages of stream %s?", name); err != nil {
				return err
			}
			nc, _, s, err := a.bindStream(ctx, name)
			if err != nil {
				return err
			}
			defer nc.Close()
			n, err := s.Purge(ctx, opts...)
			if err != nil {
				return streamErr(err, name)
			}
			if a.json {
				return a.printJSON(map[string]any{"stream": name, "purged": n})
			}
			fmt.Fprintf(a.stdout, "Purged %s messages from stream %s\n", commas(n), name)
			return nil
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&force, "force", "f", false, "do not ask for confirmation")
	fl.StringVar(&subject, "subject", "", "purge only messages on this subject (wildcards allowed)")
	fl.Uint64Var(&seq, "seq", 0, "purge messages below this sequence")
	fl.Uint64Var(&keep, "keep", 0, "keep the newest N messages")
	return c
}

func (a *app) streamGetCmd() *cobra.Command {
	var (
		lastFor string
		raw     bool
	)
	c := &cobra.Command{
		Use:   "get NAME [SEQUENCE]",
		Short: "Read a stored message",
		Long: `Print the message with SEQUENCE of the stream NAME, or with --last-for the
newest message on a subject, with its subject, time and headers. --raw prints
only the body.`,
		Example: `  natsio stream get ORDERS 1
  natsio stream get ORDERS --last-for orders.new
  natsio stream get ORDERS 42 --raw > body.bin`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			name := args[0]
			var seq uint64
			switch {
			case len(args) == 2 && lastFor != "":
				return usageError{err: errors.New("give either SEQUENCE or --last-for, not both"), cmd: c}
			case len(args) == 2:
				n, err := strconv.ParseUint(args[1], 10, 64)
				if err != nil || n == 0 {
					return usageError{err: fmt.Errorf("sequence %q is not a positive number", args[1]), cmd: c}
				}
				seq = n
			case lastFor == "":
				return usageError{err: errors.New("give a SEQUENCE or --last-for SUBJECT"), cmd: c}
			}
			nc, _, s, err := a.bindStream(ctx, name)
			if err != nil {
				return err
			}
			defer nc.Close()
			var m *jsapi.StoredMsg
			if seq > 0 {
				m, err = s.GetMsg(ctx, seq)
				if errors.Is(err, jsapi.ErrMsgNotFound) {
					return userError{msg: fmt.Sprintf("stream %s has no message with sequence %d", name, seq),
						hint: fmt.Sprintf("see its first and last sequence with `natsio stream info %s`", name), err: err}
				}
			} else {
				m, err = s.GetLastMsgForSubject(ctx, lastFor)
				if errors.Is(err, jsapi.ErrMsgNotFound) {
					return userError{msg: fmt.Sprintf("stream %s has no message on %q", name, lastFor),
						hint: fmt.Sprintf("see its subjects with `natsio stream info %s`", name), err: err}
				}
			}
			if err != nil {
				return streamErr(err, name)
			}
			switch {
			case a.json:
				jm := newJSONMsg(m.Subject, "", &m.Header, m.Data)
				jm.Sequence, jm.Time = m.Sequence, &m.Time
				return a.printJSON(jm)
			case raw:
				_, err := a.stdout.Write(m.Data)
				return err
			}
			fmt.Fprintf(a.stdout, "Item: %s#%d received %s on subject %s\n", name, m.Sequence, ago(m.Time), m.Subject)
			if !m.Header.IsZero() {
				fmt.Fprintln(a.stdout)
				writeHeaders(a.stdout, &m.Header)
			}
			fmt.Fprintln(a.stdout)
			writeBody(a.stdout, m.Data)
			return nil
		},
	}
	c.Flags().StringVar(&lastFor, "last-for", "", "get the newest message on this subject")
	c.Flags().BoolVarP(&raw, "raw", "r", false, "print only the body, unchanged")
	return c
}

func (a *app) streamRmmCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "rmm STREAM SEQUENCE",
		Short: "Remove one message from a stream",
		Long: `Remove the message with SEQUENCE from STREAM (the stream must allow
deletes). On a terminal it asks for confirmation unless --force.`,
		Example: `  natsio stream rmm ORDERS 42 --force`,
		Args:    exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			stream := args[0]
			seq, err := strconv.ParseUint(args[1], 10, 64)
			if err != nil || seq == 0 {
				return usageError{err: fmt.Errorf("sequence %q is not a positive number", args[1]), cmd: c}
			}
			if err := a.confirmed(force, "not removed", "Remove message %d from stream %s?", seq, stream); err != nil {
				return err
			}
			nc, _, s, err := a.bindStream(ctx, stream)
			if err != nil {
				return err
			}
			defer nc.Close()
			if err := s.DeleteMsg(ctx, seq); err != nil {
				// 10043: the delete failed, here because there is no such
				// message.
				var ae *jsapi.APIError
				if errors.Is(err, jsapi.ErrMsgNotFound) || (errors.As(err, &ae) && ae.ErrorCode == 10043 && strings.Contains(ae.Description, "not found")) {
					return userError{msg: fmt.Sprintf("stream %s has no message with sequence %d", stream, seq),
						hint: fmt.Sprintf("see its messages with `natsio stream view %s`", stream), err: err}
				}
				return streamErr(err, stream)
			}
			if a.json {
				return a.printJSON(map[string]any{"stream": stream, "deleted": seq})
			}
			fmt.Fprintf(a.stdout, "Removed message %d from stream %s\n", seq, stream)
			return nil
		},
	}
	c.Flags().BoolVarP(&force, "force", "f", false, "do not ask for confirmation")
	return c
}
