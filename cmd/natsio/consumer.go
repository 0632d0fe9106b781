package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

func (a *app) consumerCmd() *cobra.Command {
	return group("consumer", "Manage JetStream consumers and read through them",
		`Consumers are a stream's durable read positions: they remember what was
delivered and acknowledged. natsio creates pull consumers; 'consumer next'
reads messages through one and acknowledges them.`,
		`  natsio consumer add ORDERS worker --filter 'orders.new'
  natsio consumer ls ORDERS
  natsio consumer next ORDERS worker --count 10
  natsio consumer info ORDERS worker
  natsio consumer rm ORDERS worker`,
		a.consumerAddCmd(), a.consumerEditCmd(), a.consumerInfoCmd(), a.consumerLsCmd(), a.consumerRmCmd(),
		a.consumerNextCmd(), a.consumerPauseCmd(), a.consumerResumeCmd(), a.consumerReportCmd())
}

type consumerFlags struct {
	filters       []string
	description   string
	ack           string
	deliver       string
	startSeq      uint64
	startTime     string
	ackWait       time.Duration
	maxDeliver    int
	maxAckPending int
	replay        string
	inactive      time.Duration
	headersOnly   bool
	backoff       backoffValue
	memory        bool
	pull          bool
	natscli       consumerNatscli // the rest of natscli's flags
}

// register adds the configuration flags of consumer add and edit.
func (f *consumerFlags) register(c *cobra.Command, edit bool) {
	fl := c.Flags()
	fl.StringSliceVar(&f.filters, "filter", nil, "deliver only these subjects (comma separated or repeated)")
	fl.StringVar(&f.description, "description", "", "description")
	fl.Var(newEnum(&f.ack, "explicit", "explicit", "all", "none"), "ack", "acknowledgement policy")
	fl.StringVar(&f.deliver, "deliver", "all", "where delivery starts: all, last, new, last_per_subject (subject), by_start_sequence, by_start_time, or natscli's sequence or duration ago")
	fl.Uint64Var(&f.startSeq, "start-seq", 0, "first stream sequence (implies --deliver by_start_sequence)")
	fl.StringVar(&f.startTime, "start-time", "", "first message time, RFC 3339 or a duration ago like 1h (implies --deliver by_start_time)")
	fl.Var(newDuration(&f.ackWait, 0), "ack-wait", "redeliver an unacknowledged message after this long (default 30s)")
	fl.IntVar(&f.maxDeliver, "max-deliver", -1, "most deliveries of one message (-1: unlimited)")
	fl.IntVar(&f.maxAckPending, "max-pending", 0, "most unacknowledged messages (0: server default 1000, -1: unlimited)")
	fl.Var(newEnum(&f.replay, "instant", "instant", "original"), "replay", "replay speed")
	fl.Var(newDuration(&f.inactive, 0), "inactive-threshold", "remove the consumer after this long without activity (0: never)")
	fl.BoolVar(&f.headersOnly, "headers-only", false, "deliver headers only, without bodies")
	fl.Var(&f.backoff, "backoff", "successive redelivery delays, e.g. 1s,5s,30s, or linear (see --backoff-steps/min/max) or none (overrides --ack-wait)")
	fl.BoolVar(&f.memory, "memory", false, "keep the consumer's state in memory")
	fl.BoolVar(&f.pull, "pull", true, "a pull consumer (accepted for nats CLI scripts; natsio makes only pull consumers)")
	fl.Bool("defaults", false, "accepted for nats CLI scripts: natsio never prompts for settings")
	f.natscli.register(c, f, edit)
}

// consumerConfigFlags are the flags apply reads (edit needs one of them).
var consumerConfigFlags = []string{"filter", "description", "ack", "deliver", "start-seq", "start-time", "ack-wait",
	"max-deliver", "max-pending", "replay", "inactive-threshold", "headers-only", "backoff", "memory"}

// apply writes the flags into cfg: every flag when all is set (a new
// consumer), otherwise only those given on the command line.
func (f *consumerFlags) apply(c *cobra.Command, cfg *jsapi.ConsumerConfig, all bool) error {
	if err := f.natscli.normalize(c, f); err != nil {
		return err
	}
	set := func(name string) bool { return all || changed(c, name) }
	if set("description") {
		cfg.Description = f.description
	}
	if set("ack") {
		cfg.AckPolicy = jsapi.AckPolicy(f.ack)
	}
	if set("deliver") {
		cfg.DeliverPolicy = jsapi.DeliverPolicy(f.deliver)
	}
	if set("ack-wait") {
		cfg.AckWait = f.ackWait
	}
	if set("max-deliver") {
		cfg.MaxDeliver = f.maxDeliver
	}
	if set("max-pending") {
		cfg.MaxAckPending = f.maxAckPending
	}
	if set("replay") {
		cfg.ReplayPolicy = jsapi.ReplayPolicy(f.replay)
	}
	if set("inactive-threshold") {
		cfg.InactiveThreshold = f.inactive
	}
	if set("headers-only") {
		cfg.HeadersOnly = f.headersOnly
	}
	if set("backoff") && f.backoff.mode == "" {
		cfg.BackOff = f.backoff.delays
	}
	if set("memory") {
		cfg.MemoryStorage = f.memory
	}
	if set("filter") {
		cfg.FilterSubject, cfg.FilterSubjects = "", nil
		switch len(f.filters) {
		case 0:
		case 1:
			cfg.FilterSubject = f.filters[0]
		default:
			cfg.FilterSubjects = f.filters
		}
	}
	if changed(c, "start-seq") {
		if changed(c, "deliver") && f.deliver != string(jsapi.DeliverByStartSequence) {
			return usageError{err: errors.New("--start-seq needs --deliver by_start_sequence"), cmd: c}
		}
		cfg.DeliverPolicy, cfg.OptStartSeq = jsapi.DeliverByStartSequence, f.startSeq
	}
	if f.startTime != "" {
		if changed(c, "deliver") && f.deliver != string(jsapi.DeliverByStartTime) {
			return usageError{err: errors.New("--start-time needs --deliver by_start_time"), cmd: c}
		}
		t, err := time.Parse(time.RFC3339, f.startTime)
		if err != nil {
			d, derr := parseDuration(f.startTime)
			if derr != nil {
				return usageError{err: fmt.Errorf("--start-time %q is neither an RFC 3339 time nor a duration", f.startTime), cmd: c}
			}
			t = time.Now().Add(-d)
		}
		cfg.DeliverPolicy, cfg.OptStartTime = jsapi.DeliverByStartTime, t
	}
	if cfg.DeliverPolicy == jsapi.DeliverByStartSequence && cfg.OptStartSeq == 0 {
		return usageError{err: errors.New("--deliver by_start_sequence needs --start-seq"), cmd: c}
	}
	if cfg.DeliverPolicy == jsapi.DeliverByStartTime && cfg.OptStartTime.IsZero() {
		return usageError{err: errors.New("--deliver by_start_time needs --start-time"), cmd: c}
	}
	return f.natscli.apply(c, f, cfg, all)
}

func (a *app) consumerAddCmd() *cobra.Command {
	var f consumerFlags
	c := &cobra.Command{
		Use:     "add STREAM NAME",
		Aliases: []string{"create", "new"},
		Short:   "Create a durable pull consumer",
		Long: `Create the durable pull consumer NAME on STREAM. By default it delivers every
message of the stream and expects each to be acknowledged (--ack explicit).
Adding a consumer that exists with the same configuration succeeds and
changes nothing; one that exists with another configuration is refused:
change it with 'consumer edit', which changes only the settings given.`,
		Example: `  natsio consumer add ORDERS worker
  natsio consumer add ORDERS new-only --deliver new --filter 'orders.new'
  natsio consumer add ORDERS replay --deliver by_start_sequence --start-seq 100 --ack none
  natsio consumer add ORDERS slow --ack-wait 2m --max-deliver 5`,
		Args: exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error { return a.runConsumerAdd(c, args[0], args[1], &f) },
	}
	f.register(c, false)
	return c
}

func (a *app) runConsumerAdd(c *cobra.Command, stream, name string, f *consumerFlags) error {
	ctx := c.Context()
	if err := jsapi.ValidateName(stream); err != nil {
		return invalidName("stream", stream, err)
	}
	if err := jsapi.ValidateName(name); err != nil {
		return invalidName("consumer", name, err)
	}
	if !f.pull && f.natscli.target == "" {
		return usageError{err: errors.New("natsio reads through pull consumers only: a push consumer (--pull=false) needs --target SUBJECT"), cmd: c}
	}
	cfg := jsapi.ConsumerConfig{}
	if f.natscli.config != "" {
		b, err := os.ReadFile(f.natscli.config)
		if err != nil {
			return userError{msg: "reading --config: " + err.Error(), err: err}
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return userError{msg: fmt.Sprintf("--config %s is not a consumer configuration: %v", f.natscli.config, err), err: err}
		}
	}
	cfg.Durable, cfg.Name = name, ""
	if err := f.apply(c, &cfg, f.natscli.config == ""); err != nil {
		return err
	}
	if done, err := a.addDone(&f.natscli.add, "Consumer "+stream+" > "+name, cfg); done {
		return err
	}
	nc, js, err := a.jetstream(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	ci, err := js.CreateConsumer(ctx, stream, cfg)
	if errors.Is(err, jsapi.ErrConsumerExists) {
		return userError{msg: fmt.Sprintf("consumer %s > %s already exists with another configuration", stream, name),
			hint: fmt.Sprintf("change what you name with `natsio consumer edit %s %s --FLAG VALUE`, or remove it first with `natsio consumer rm %s %s`", stream, name, stream, name), err: err}
	}
	if err != nil {
		return consumerErr(err, stream, name)
	}
	if !a.json {
		fmt.Fprintf(a.stdout, "Consumer %s > %s created\n\n", stream, ci.Name)
	}
	return a.printConsumerInfo(ci)
}

func (a *app) consumerEditCmd() *cobra.Command {
	var f consumerFlags
	c := &cobra.Command{
		Use:     "edit STREAM NAME",
		Aliases: []string{"update"},
		Short:   "Change a consumer's configuration",
		Long: `Change the configuration of the consumer NAME of STREAM: its current
configuration is read, the flags given are applied to it, and the result is
written back, so settings you do not name are kept. The server refuses
changes to some settings (the ack, deliver and replay policies, the start).`,
		Example: `  natsio consumer edit ORDERS worker --max-deliver 9
  natsio consumer edit ORDERS worker --description 'order worker' --ack-wait 1m`,
		Args: exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			stream, name := args[0], args[1]
			if !anyChanged(c, consumerConfigFlags...) && !anyChanged(c, consumerNatscliFlags...) && !f.natscli.edit.any() {
				return usageError{err: errors.New("nothing to change: give at least one configuration flag"), cmd: c}
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			ci, err := js.Consumer(ctx, stream, name)
			if err != nil {
				return consumerErr(err, stream, name)
			}
			cur := ci.Config
			cfg, err := editBase(a, &f.natscli.edit, "consumer", cur)
			if err != nil {
				return err
			}
			if err := f.apply(c, &cfg, false); err != nil {
				return err
			}
			if f.natscli.edit.dry {
				return a.printDiff("consumer", cur, cfg)
			}
			ci, err = js.UpdateConsumer(ctx, stream, cfg)
			if err != nil {
				return consumerErr(err, stream, name)
			}
			if !a.json {
				fmt.Fprintf(a.stdout, "Consumer %s > %s updated\n\n", stream, ci.Name)
			}
			return a.printConsumerInfo(ci)
		},
	}
	f.register(c, true)
	return c
}

func (a *app) consumerInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info STREAM NAME",
		Short: "Show a consumer's configuration and state",
		Example: `  natsio consumer info ORDERS worker
  natsio consumer info ORDERS worker --json`,
		Args: exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			ci, err := js.Consumer(ctx, args[0], args[1])
			if err != nil {
				return consumerErr(err, args[0], args[1])
			}
			return a.printConsumerInfo(ci)
		},
	}
}

func (a *app) printConsumerInfo(ci *jsapi.ConsumerInfo) error {
	if a.json {
		return a.printJSON(ci)
	}
	cfg := ci.Config
	conf := &section{title: "Configuration:"}
	conf.add("Stream", ci.Stream)
	conf.add("Name", ci.Name)
	conf.addIf("Description", cfg.Description)
	conf.add("Created", ago(ci.Created))
	kind := "pull"
	if cfg.DeliverSubject != "" {
		kind = "push to " + cfg.DeliverSubject
	}
	conf.add("Kind", kind)
	if cfg.Durable != "" {
		conf.add("Durable", "yes")
	}
	filters := cfg.FilterSubjects
	if cfg.FilterSubject != "" {
		filters = append(filters, cfg.FilterSubject)
	}
	conf.add("Filter subjects", orDash(strings.Join(filters, ", ")))
	deliver := string(orDefault(cfg.DeliverPolicy, jsapi.DeliverAll))
	switch cfg.DeliverPolicy {
	case jsapi.DeliverByStartSequence:
		deliver += fmt.Sprintf(" (from %d)", cfg.OptStartSeq)
	case jsapi.DeliverByStartTime:
		deliver += " (from " + cfg.OptStartTime.Local().Format(time.RFC3339) + ")"
	}
	conf.add("Deliver policy", deliver)
	conf.add("Ack policy", string(orDefault(cfg.AckPolicy, jsapi.AckNone)))
	if cfg.AckPolicy != jsapi.AckNone && cfg.AckPolicy != "" {
		conf.add("Ack wait", humanDuration(cfg.AckWait, "30s"))
		conf.add("Max ack pending", limit(cfg.MaxAckPending, false))
	}
	conf.add("Max deliveries", limit(cfg.MaxDeliver, false))
	conf.add("Replay policy", string(orDefault(cfg.ReplayPolicy, jsapi.ReplayInstant)))
	if len(cfg.BackOff) > 0 {
		var bs []string
		for _, b := range cfg.BackOff {
			bs = append(bs, b.String())
		}
		conf.add("Backoff", strings.Join(bs, ", "))
	}
	if cfg.InactiveThreshold > 0 {
		conf.add("Inactive threshold", humanDuration(cfg.InactiveThreshold, "-"))
	}
	if cfg.HeadersOnly {
		conf.add("Headers only", "yes")
	}

	state := &section{title: "State:"}
	state.add("Last delivered", fmt.Sprintf("consumer seq %d, stream seq %d", ci.Delivered.Consumer, ci.Delivered.Stream))
	state.add("Acknowledged floor", fmt.Sprintf("consumer seq %d, stream seq %d", ci.AckFloor.Consumer, ci.AckFloor.Stream))
	state.add("Pending messages", commas(ci.NumPending))
	state.add("Awaiting acks", strconv.Itoa(ci.NumAckPending))
	state.add("Redelivered", strconv.Itoa(ci.NumRedelivered))
	state.add("Waiting pulls", strconv.Itoa(ci.NumWaiting))
	if ci.Paused {
		state.add("Paused", "for "+humanDuration(ci.PauseRemaining, "-"))
	}
	a.sections(conf, state)
	return nil
}

func (a *app) consumerLsCmd() *cobra.Command {
	var names bool
	c := &cobra.Command{
		Use:     "ls STREAM",
		Aliases: []string{"list"},
		Short:   "List a stream's consumers",
		Example: `  natsio consumer ls ORDERS
  natsio consumer ls ORDERS --names`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			stream := args[0]
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			if names {
				list, err := collect(js.ConsumerNames(ctx, stream))
				if err != nil {
					return streamErr(err, stream)
				}
				if a.json {
					return a.printJSON(nonNil(list))
				}
				for _, n := range list {
					fmt.Fprintln(a.stdout, n)
				}
				return nil
			}
			infos, err := collect(js.Consumers(ctx, stream))
			if err != nil {
				return streamErr(err, stream)
			}
			if a.json {
				return a.printJSON(nonNil(infos))
			}
			if len(infos) == 0 {
				fmt.Fprintf(a.stderr, "Stream %s has no consumers; create one with `natsio consumer add %s NAME`\n", stream, stream)
				return nil
			}
			rows := make([][]string, 0, len(infos))
			for _, ci := range infos {
				last := "never"
				if !ci.Delivered.LastActive.IsZero() {
					last = humanDuration(time.Since(ci.Delivered.LastActive).Round(time.Second), "0s") + " ago"
				}
				rows = append(rows, []string{ci.Name, string(orDefault(ci.Config.AckPolicy, jsapi.AckNone)),
					commas(ci.NumPending), strconv.Itoa(ci.NumAckPending), strconv.Itoa(ci.NumRedelivered), last})
			}
			a.table([]string{"NAME", "ACK", "PENDING", "UNACKED", "REDELIVERED", "LAST DELIVERY"}, rows)
			return nil
		},
	}
	c.Flags().BoolVarP(&names, "names", "n", false, "list only the names")
	return c
}

func (a *app) consumerRmCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:     "rm STREAM NAME",
		Aliases: []string{"delete", "del"},
		Short:   "Delete a consumer",
		Long:    `Delete the consumer NAME of STREAM. On a terminal it asks for confirmation unless --force.`,
		Example: `  natsio consumer rm ORDERS worker --force`,
		Args:    exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			stream, name := args[0], args[1]
			if err := a.confirmed(force, "not deleted", "Delete consumer %s > %s?", stream, name); err != nil {
				return err
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			if err := js.DeleteConsumer(ctx, stream, name); err != nil {
				return consumerErr(err, stream, name)
			}
			if a.json {
				return a.printJSON(map[string]any{"stream": stream, "deleted": name})
			}
			fmt.Fprintf(a.stdout, "Consumer %s > %s deleted\n", stream, name)
			return nil
		},
	}
	c.Flags().BoolVarP(&force, "force", "f", false, "do not ask for confirmation")
	return c
}

func (a *app) consumerNextCmd() *cobra.Command {
	var (
		count int
		ack   bool
		noAck bool
		wait  time.Duration
		raw   bool
	)
	c := &cobra.Command{
		Use:   "next STREAM NAME",
		Short: "Read the next messages through a pull consumer",
		Long: `Pull the next --count messages (default 1) from the consumer NAME of STREAM
and print them with their stream sequence and delivery count. With --ack
(the default) each message is acknowledged once printed and the server has
confirmed it; with --no-ack it is left unacknowledged and will be redelivered
after the consumer's ack wait. Fails when no message arrives within --wait.`,
		Example: `  natsio consumer next ORDERS worker
  natsio consumer next ORDERS worker --count 10 --ack
  natsio consumer next ORDERS worker --no-ack --raw
  natsio consumer next ORDERS worker --wait 30s`,
		Args: exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			stream, name := args[0], args[1]
			if count < 1 {
				return usageError{err: fmt.Errorf("--count must be at least 1, got %d", count), cmd: c}
			}
			if noAck {
				ack = false
			}
			nc, js, err := a.jetstream(ctx)
			if err != nil {
				return err
			}
			defer nc.Close()
			info, err := js.Consumer(ctx, stream, name)
			if err != nil {
				return consumerErr(err, stream, name)
			}
			cons, err := pull.FromInfo(js, info)
			if err != nil {
				return consumerErr(err, stream, name)
			}
			ackNone := cons.CachedInfo() != nil && orDefault(cons.CachedInfo().Config.AckPolicy, jsapi.AckNone) == jsapi.AckNone
			for i := 1; i <= count; i++ {
				wctx, cancel := context.WithTimeout(ctx, wait)
				m, err := cons.Next(wctx)
				cancel()
				if err != nil {
					if errors.Is(err, pull.ErrNoMessages) {
						msg := fmt.Sprintf("no message from consumer %s > %s within %v", stream, name, wait)
						if i > 1 {
							msg = fmt.Sprintf("only %d of %d messages from consumer %s > %s within %v", i-1, count, stream, name, wait)
						}
						return userError{msg: msg, hint: "the consumer has nothing pending; publish first or wait longer with --wait", err: err}
					}
					return consumerErr(err, stream, name)
				}
				md, _ := m.Metadata()
				acked := false
				if ack && !ackNone {
					if err := m.AckSync(ctx); err != nil {
						return fmt.Errorf("acknowledging stream sequence %d: %w", md.StreamSeq, err)
					}
					acked = true
				}
				switch {
				case a.json:
					jm := newJSONMsg(m.Subject, "", &m.Header, m.Data)
					jm.Sequence, jm.Time = md.StreamSeq, &md.Timestamp
					a.printJSONLine(struct {
						jsonMsg
						Delivered uint64 `json:"delivered"`
						Pending   uint64 `json:"pending"`
						Acked     bool   `json:"acked"`
					}{jm, md.NumDelivered, md.NumPending, acked})
				case raw:
					writeBody(a.stdout, m.Data)
				default:
					fmt.Fprintf(a.stdout, "[%s] subject %s, stream seq %d, consumer seq %d, delivered %d time(s), %d pending\n",
						md.Timestamp.Local().Format("15:04:05"), m.Subject, md.StreamSeq, md.ConsumerSeq, md.NumDelivered, md.NumPending)
					writeHeaders(a.stdout, &m.Header)
					if !m.Header.IsZero() {
						fmt.Fprintln(a.stdout)
					}
					writeBody(a.stdout, m.Data)
					if acked {
						fmt.Fprintln(a.stdout, "Acknowledged")
					}
					fmt.Fprintln(a.stdout)
				}
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.IntVarP(&count, "count", "c", 1, "number of messages to read")
	fl.BoolVar(&ack, "ack", true, "acknowledge each message")
	fl.BoolVar(&noAck, "no-ack", false, "leave messages unacknowledged")
	fl.DurationVar(&wait, "wait", 5*time.Second, "how long to wait for each message")
	fl.BoolVarP(&raw, "raw", "r", false, "print only the bodies")
	return c
}
