package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/jsapi"
)

// backoffValue is --backoff: natscli's MODE (linear, none) or natsio's
// list of delays (1s,5s,30s).
type backoffValue struct {
	mode   string
	delays []time.Duration
}

func (b *backoffValue) String() string {
	if b.mode != "" {
		return b.mode
	}
	s := make([]string, len(b.delays))
	for i, d := range b.delays {
		s[i] = d.String()
	}
	return strings.Join(s, ",")
}

func (b *backoffValue) Type() string { return "linear|none|durations" }

func (b *backoffValue) Set(v string) error {
	switch strings.ToLower(v) {
	case "linear", "none":
		b.mode, b.delays = strings.ToLower(v), nil
		return nil
	}
	b.mode, b.delays = "", nil
	for _, p := range strings.Split(v, ",") {
		d, err := parseDuration(strings.TrimSpace(p))
		if err != nil {
			return fmt.Errorf("%q is neither linear, none nor a list of durations", v)
		}
		b.delays = append(b.delays, d)
	}
	return nil
}

// linearBackoff is natscli's linear policy: steps delays from min,
// stepping evenly towards max.
func linearBackoff(steps uint, lo, hi time.Duration) ([]time.Duration, error) {
	if steps == 0 || lo <= 0 || hi <= 0 {
		return nil, errors.New("--backoff linear needs --backoff-steps, --backoff-min and --backoff-max above 0")
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	step := (hi - lo) / time.Duration(steps)
	if hi != lo && step == 0 {
		return nil, fmt.Errorf("the range %v to %v is too small for %d steps", lo, hi, steps)
	}
	out := make([]time.Duration, steps)
	for i := range out {
		out[i] = (lo + time.Duration(i)*step).Round(time.Millisecond)
	}
	return out, nil
}

// consumerNatscli are natscli's consumer add/edit flags beyond
// consumerFlags'.
type consumerNatscli struct {
	backoffSteps                  uint
	backoffMin, backoffMax        time.Duration
	deliverGroup, target          string
	ephemeral, flowControl        bool
	heartbeat                     time.Duration
	bps                           uint64
	maxWaiting, maxPullBatch      int
	maxPullBytes                  int
	maxPullExpire                 time.Duration
	sample, replicas              int
	metadata                      map[string]string
	pause                         string
	pinned, overflow, prioritized []string
	pinnedTTL                     time.Duration
	config                        string
	add                           addExtras
	edit                          editExtras
}

// consumerNatscliFlags are the configuration flags consumerNatscli adds
// (edit needs one of them, or those of consumerFlags).
var consumerNatscliFlags = []string{"backoff-steps", "backoff-min", "backoff-max", "wait", "max-outstanding",
	"max-pull-batch", "max-pull-expire", "max-pull-bytes", "sample", "target", "replicas", "metadata"}

func (x *consumerNatscli) register(c *cobra.Command, f *consumerFlags, edit bool) {
	fl := c.Flags()
	fl.UintVar(&x.backoffSteps, "backoff-steps", 10, "number of delays --backoff linear makes")
	fl.Var(newDuration(&x.backoffMin, time.Minute), "backoff-min", "the shortest delay --backoff linear makes")
	fl.Var(newDuration(&x.backoffMax, 20*time.Minute), "backoff-max", "the longest delay --backoff linear makes")
	fl.Var(newDuration(&f.ackWait, 0), "wait", "the same as --ack-wait (natscli's name)")
	fl.IntVar(&f.maxAckPending, "max-outstanding", 0, "the same as --max-pending")
	_ = fl.MarkHidden("max-outstanding")
	fl.IntVar(&x.maxPullBatch, "max-pull-batch", 0, "the largest batch a pull request may ask for")
	fl.Var(newDuration(&x.maxPullExpire, 0), "max-pull-expire", "the longest expiry a pull request may ask for")
	fl.IntVar(&x.maxPullBytes, "max-pull-bytes", 0, "the most bytes a pull request may ask for")
	fl.IntVar(&x.sample, "sample", -1, "percentage of acknowledgements to sample for monitoring (-1: none)")
	fl.StringVar(&x.target, "target", "", "deliver to this subject: a push consumer (natsio reads through pull consumers only)")
	fl.IntVar(&x.replicas, "replicas", 0, "replicas of the consumer's state (0: as the stream)")
	fl.StringToStringVar(&x.metadata, "metadata", nil, "metadata KEY=VALUE pairs")
	if edit {
		x.edit.register(c, "consumer")
	} else {
		fl.Uint64Var(&x.bps, "bps", 0, "push consumers: deliver at most this many bits per second")
		fl.StringVar(&x.deliverGroup, "deliver-group", "", "push consumers: deliver only to subscriptions of this queue group")
		fl.BoolVar(&x.ephemeral, "ephemeral", false, "create an ephemeral consumer: removed after --inactive-threshold without activity (server default 5s)")
		fl.BoolVar(&x.flowControl, "flow-control", false, "push consumers: flow control")
		fl.Var(newDuration(&x.heartbeat, 0), "heartbeat", "push consumers: idle heartbeat interval")
		fl.IntVar(&x.maxWaiting, "max-waiting", 0, "the most pull requests that may wait")
		fl.StringVar(&x.pause, "pause", "", "pause the consumer for a duration, or until an RFC 3339 time")
		fl.StringSliceVar(&x.pinned, "pinned-groups", nil, "priority groups with a pinned client")
		fl.Var(newDuration(&x.pinnedTTL, 0), "pinned-ttl", "how long a pinned client may go without pulling before it loses the pin")
		fl.StringSliceVar(&x.overflow, "overflow-groups", nil, "priority groups of the overflow policy")
		fl.StringSliceVar(&x.prioritized, "prioritized-groups", nil, "priority groups of the prioritized policy")
		fl.StringVar(&x.config, "config", "", "JSON file with a consumer configuration (as 'consumer info --json' prints under \"config\"); flags given override it")
		x.add.register(c)
	}
	if af := fl.Lookup("ack"); af != nil {
		if e, ok := af.Value.(*enumValue); ok {
			e.allowed = append(e.allowed, "flow_control")
		}
	}
	addNegations(c)
}

// normalize turns natscli's --deliver forms (subject, next, a sequence, a
// duration ago) into natsio's before the flags are applied.
func (x *consumerNatscli) normalize(c *cobra.Command, f *consumerFlags) error {
	if !changed(c, "deliver") {
		return nil
	}
	d := strings.ToLower(f.deliver)
	switch d {
	case "all", "last", "new", "last_per_subject", "by_start_sequence", "by_start_time":
	case "subject":
		d = "last_per_subject"
	case "next":
		d = "new"
	default:
		if n, err := strconv.ParseUint(d, 10, 64); err == nil {
			d = "by_start_sequence"
			if err := c.Flags().Set("start-seq", strconv.FormatUint(n, 10)); err != nil {
				return err
			}
		} else if _, err := parseDuration(d); err == nil {
			if err := c.Flags().Set("start-time", d); err != nil {
				return err
			}
			d = "by_start_time"
		} else {
			return usageError{err: fmt.Errorf("--deliver %q is not all, new, last, subject, a sequence or a duration", f.deliver), cmd: c}
		}
	}
	f.deliver = d
	return nil
}

// apply writes the flags given (every one when all is set) into cfg.
func (x *consumerNatscli) apply(c *cobra.Command, f *consumerFlags, cfg *jsapi.ConsumerConfig, all bool) error {
	set := func(name string) bool { return all || changed(c, name) }
	if changed(c, "wait") {
		cfg.AckWait = f.ackWait
	}
	if changed(c, "max-outstanding") {
		cfg.MaxAckPending = f.maxAckPending
	}
	if changed(c, "backoff") {
		switch f.backoff.mode {
		case "none":
			cfg.BackOff = nil
		case "linear":
			b, err := linearBackoff(x.backoffSteps, x.backoffMin, x.backoffMax)
			if err != nil {
				return usageError{err: err, cmd: c}
			}
			cfg.BackOff = b
		}
	}
	if set("max-pull-batch") {
		cfg.MaxRequestBatch = x.maxPullBatch
	}
	if set("max-pull-expire") {
		cfg.MaxRequestExpires = x.maxPullExpire
	}
	if set("max-pull-bytes") {
		cfg.MaxRequestMaxBytes = x.maxPullBytes
	}
	if changed(c, "sample") {
		switch {
		case x.sample < 0:
			cfg.SampleFrequency = ""
		case x.sample > 100:
			return usageError{err: fmt.Errorf("--sample %d: a percentage from 0 to 100", x.sample), cmd: c}
		default:
			cfg.SampleFrequency = strconv.Itoa(x.sample) + "%"
		}
	}
	if set("replicas") {
		cfg.Replicas = x.replicas
	}
	if changed(c, "metadata") {
		cfg.Metadata = x.metadata
	}
	if changed(c, "target") {
		cfg.DeliverSubject = x.target
	}
	if changed(c, "deliver-group") {
		cfg.DeliverGroup = x.deliverGroup
	}
	if changed(c, "flow-control") {
		cfg.FlowControl = x.flowControl
	}
	if changed(c, "heartbeat") {
		cfg.IdleHeartbeat = x.heartbeat
	}
	if changed(c, "bps") {
		cfg.RateLimit = x.bps
	}
	if cfg.DeliverSubject == "" && (cfg.DeliverGroup != "" || cfg.FlowControl || cfg.RateLimit != 0) {
		return usageError{err: errors.New("--deliver-group, --flow-control and --bps are for push consumers: give --target too"), cmd: c}
	}
	if set("max-waiting") && x.maxWaiting != 0 {
		cfg.MaxWaiting = x.maxWaiting
	}
	if x.ephemeral {
		cfg.Name, cfg.Durable = cfg.Durable, ""
	}
	if x.pause != "" {
		t, err := time.Parse(time.RFC3339, x.pause)
		if err != nil {
			d, derr := parseDuration(x.pause)
			if derr != nil {
				return usageError{err: fmt.Errorf("--pause %q is neither a duration nor an RFC 3339 time", x.pause), cmd: c}
			}
			t = time.Now().Add(d)
		}
		cfg.PauseUntil = t
	}
	groups := 0
	for _, g := range []struct {
		names  []string
		policy jsapi.PriorityPolicy
	}{{x.pinned, jsapi.PriorityPinnedClient}, {x.overflow, jsapi.PriorityOverflow}, {x.prioritized, jsapi.PriorityPrioritized}} {
		if len(g.names) > 0 {
			groups++
			cfg.PriorityGroups, cfg.PriorityPolicy = g.names, g.policy
		}
	}
	if groups > 1 {
		return usageError{err: errors.New("give one of --pinned-groups, --overflow-groups and --prioritized-groups"), cmd: c}
	}
	if changed(c, "pinned-ttl") {
		cfg.PriorityTimeout = x.pinnedTTL
	}
	return nil
}
