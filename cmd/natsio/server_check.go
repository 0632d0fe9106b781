package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/jsapi"
)

// Nagios exit codes.
const (
	nagiosOK       = 0
	nagiosWarning  = 1
	nagiosCritical = 2
	nagiosUnknown  = 3
)

// checkResult is the outcome of one `server check`, rendered in natscli's
// formats: Nagios (the status, the messages, then "|" and performance
// data), JSON or text; its exit code is Nagios's.
type checkResult struct {
	Output    string      `json:"output,omitempty"`
	Status    string      `json:"status"`
	Check     string      `json:"check_suite"`
	Name      string      `json:"check_name"`
	Warnings  []string    `json:"warning,omitempty"`
	Criticals []string    `json:"critical,omitempty"`
	OKs       []string    `json:"ok,omitempty"`
	PerfData  []*perfItem `json:"perf_data"`
}

// perfItem is one Nagios performance datum.
type perfItem struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Warn  float64 `json:"warning"`
	Crit  float64 `json:"critical"`
	Unit  string  `json:"unit,omitempty"`
}

func (r *checkResult) ok(f string, a ...any)   { r.OKs = append(r.OKs, fmt.Sprintf(f, a...)) }
func (r *checkResult) warn(f string, a ...any) { r.Warnings = append(r.Warnings, fmt.Sprintf(f, a...)) }
func (r *checkResult) crit(f string, a ...any) {
	r.Criticals = append(r.Criticals, fmt.Sprintf(f, a...))
}
func (r *checkResult) pd(items ...*perfItem) { r.PerfData = append(r.PerfData, items...) }

// critIf records err as critical and reports whether there was one.
func (r *checkResult) critIf(err error, f string, a ...any) bool {
	if err == nil {
		return false
	}
	r.crit(f, a...)
	return true
}

func (r *checkResult) prepare() {
	switch {
	case len(r.Criticals) > 0:
		r.Status = "CRITICAL"
	case len(r.Warnings) > 0:
		r.Status = "WARNING"
	default:
		r.Status = "OK"
	}
	if r.PerfData == nil {
		r.PerfData = []*perfItem{}
	}
}

func (r *checkResult) code() int {
	switch r.Status {
	case "OK":
		return nagiosOK
	case "WARNING":
		return nagiosWarning
	case "CRITICAL":
		return nagiosCritical
	}
	return nagiosUnknown
}

func (p *perfItem) String() string {
	vf := "%0.0f"
	if p.Unit == "s" {
		vf = "%0.4f"
	}
	name := p.Name
	if strings.ContainsAny(name, " \t") {
		name = "'" + name + "'"
	}
	s := fmt.Sprintf("%s="+vf, name, p.Value) + p.Unit
	if p.Warn != 0 || p.Crit != 0 {
		if p.Warn != 0 {
			s += fmt.Sprintf(";"+vf, p.Warn)
		} else {
			s += ";"
		}
		if p.Crit != 0 {
			s += fmt.Sprintf(";"+vf, p.Crit)
		}
	}
	return s
}

func (r *checkResult) nagios() string {
	parts := []string{r.Name}
	for _, c := range r.Criticals {
		parts = append(parts, "Crit:"+c)
	}
	for _, w := range r.Warnings {
		parts = append(parts, "Warn:"+w)
	}
	if r.Output != "" {
		parts = append(parts, r.Output)
	} else {
		for _, o := range r.OKs {
			parts = append(parts, "OK:"+o)
		}
	}
	s := r.Status + " " + strings.Join(parts, " ")
	if len(r.PerfData) == 0 {
		return s
	}
	pd := make([]string, len(r.PerfData))
	for i, p := range r.PerfData {
		pd[i] = p.String()
	}
	return s + " | " + strings.Join(pd, " ")
}

func (r *checkResult) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.Name, r.Status)
	if len(r.OKs)+len(r.Warnings)+len(r.Criticals) > 0 {
		b.WriteString("\nStatus Detail\n\n")
		for _, o := range r.OKs {
			fmt.Fprintf(&b, "  %-8s  %s\n", "OK", o)
		}
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "  %-8s  %s\n", "Warning", w)
		}
		for _, c := range r.Criticals {
			fmt.Fprintf(&b, "  %-8s  %s\n", "Critical", c)
		}
	}
	if len(r.PerfData) > 0 {
		b.WriteString("\nCheck Metrics\n\n")
		for _, p := range r.PerfData {
			fmt.Fprintf(&b, "  %-28s %v%s (warning %v, critical %v)\n", p.Name, p.Value, p.Unit, p.Warn, p.Crit)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// checkFlags are the flags of the check group.
type checkFlags struct {
	format, outfile string
}

// finish renders r and returns its Nagios exit code as the command's.
func (a *app) finish(f *checkFlags, r *checkResult) error {
	r.prepare()
	var out string
	switch {
	case f.format == "json" || a.json:
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		out = string(b)
	case f.format == "text":
		out = r.text()
	default:
		out = r.nagios()
	}
	if f.outfile != "" {
		tmp, err := os.CreateTemp(filepath.Dir(f.outfile), ".natsio-check-*")
		if err != nil {
			return userError{msg: "cannot write --outfile: " + err.Error(), err: err}
		}
		_, werr := fmt.Fprintln(tmp, out)
		cerr := tmp.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Rename(tmp.Name(), f.outfile)
		}
		if werr != nil {
			os.Remove(tmp.Name())
			return userError{msg: "cannot write --outfile: " + werr.Error(), err: werr}
		}
	} else {
		fmt.Fprintln(a.stdout, out)
	}
	if c := r.code(); c != nagiosOK {
		return exitStatus(c)
	}
	return nil
}

func (a *app) serverCheckCmd() *cobra.Command {
	var f checkFlags
	c := group("check", "Health checks for NATS servers, streams and consumers",
		`Monitoring-system checks in natscli's Nagios form: one line with the status
(OK, WARNING, CRITICAL), what was found, then "|" and performance data; the
exit code is Nagios's (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN). --format json
or text renders the same result otherwise. These checks need no system
account.`,
		`  natsio server check connection --rtt-warn 100ms
  natsio server check stream --stream ORDERS --peer-expect 3 --msgs-warn 1
  natsio server check consumer --stream ORDERS --consumer worker --unprocessed-critical 1000
  natsio server check jetstream --mem-warn 70 --format text`,
		a.checkConnectionCmd(&f), a.checkStreamCmd(&f), a.checkConsumerCmd(&f), a.checkJetStreamCmd(&f))
	pf := c.PersistentFlags()
	pf.Var(newEnum(&f.format, "nagios", "nagios", "json", "text"), "format", "render the check as nagios, json or text")
	pf.StringVar(&f.outfile, "outfile", "", "write the result to this file (atomically) instead of stdout")
	return c
}

func (a *app) checkConnectionCmd(f *checkFlags) *cobra.Command {
	var connWarn, connCrit, rttWarn, rttCrit, reqWarn, reqCrit time.Duration
	c := &cobra.Command{
		Use: "connection",
		Example: `  natsio server check connection
  natsio server check conn --connect-warn 100ms --rtt-critical 50ms`,
		Aliases: []string{"conn"},
		Short:   "Check a connection to the server: connect time, RTT and a round trip",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			r := &checkResult{Name: "Connection", Check: "connections"}
			a.checkConnection(c.Context(), r, connWarn, connCrit, rttWarn, rttCrit, reqWarn, reqCrit)
			return a.finish(f, r)
		},
	}
	fl := c.Flags()
	fl.Var(newDuration(&connWarn, 500*time.Millisecond), "connect-warn", "warning threshold for establishing the connection")
	fl.Var(newDuration(&connCrit, time.Second), "connect-critical", "critical threshold for establishing the connection")
	fl.Var(newDuration(&rttWarn, 500*time.Millisecond), "rtt-warn", "warning threshold for the server RTT")
	fl.Var(newDuration(&rttCrit, time.Second), "rtt-critical", "critical threshold for the server RTT")
	fl.Var(newDuration(&reqWarn, 500*time.Millisecond), "req-warn", "warning threshold for a full round trip")
	fl.Var(newDuration(&reqCrit, time.Second), "req-critical", "critical threshold for a full round trip")
	return c
}

// thresholds records a duration against its warning and critical limits.
func thresholds(r *checkResult, v, warn, crit time.Duration, critMsg, warnMsg, okMsg string) {
	switch {
	case crit > 0 && v >= crit:
		r.crit("%s", critMsg)
	case warn > 0 && v >= warn:
		r.warn("%s", warnMsg)
	default:
		r.ok("%s", okMsg)
	}
}

func (a *app) checkConnection(ctx context.Context, r *checkResult, connWarn, connCrit, rttWarn, rttCrit, reqWarn, reqCrit time.Duration) {
	start := time.Now()
	nc, err := a.connect(ctx)
	if r.critIf(err, "connection failed: %v", err) {
		return
	}
	defer nc.Close()
	ct := time.Since(start)
	url := redactURL(nc.ConnectedURL())
	r.pd(&perfItem{Name: "connect_time", Value: ct.Seconds(), Warn: connWarn.Seconds(), Crit: connCrit.Seconds(), Unit: "s"})
	thresholds(r, ct, connWarn, connCrit,
		fmt.Sprintf("connected to %s, connect time exceeded %v", url, connCrit),
		fmt.Sprintf("connected to %s, connect time exceeded %v", url, connWarn),
		fmt.Sprintf("connected to %s in %s", url, ct.Round(time.Microsecond)))

	rtt, err := nc.RTT(ctx)
	if r.critIf(err, "rtt failed: %s", err) {
		return
	}
	r.pd(&perfItem{Name: "rtt", Value: rtt.Seconds(), Warn: rttWarn.Seconds(), Crit: rttCrit.Seconds(), Unit: "s"})
	thresholds(r, rtt, rttWarn, rttCrit, fmt.Sprintf("rtt time exceeded %v", rttCrit),
		fmt.Sprintf("rtt time exceeded %v", rttWarn), fmt.Sprintf("rtt time %v", rtt.Round(time.Microsecond)))

	// A message to ourselves and back.
	ib := nc.NewInbox()
	sub, err := nc.Subscribe(ib)
	if r.critIf(err, "could not subscribe to %s: %s", ib, err) {
		return
	}
	defer sub.Unsubscribe()
	start = time.Now()
	if err := nc.Publish(ib, []byte(ib)); r.critIf(err, "could not publish to %s: %s", ib, err) {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, max(reqCrit, time.Second)+a.conn.timeout)
	defer cancel()
	m, err := sub.NextMsg(wctx)
	if r.critIf(err, "did not receive from %s: %s", ib, err) {
		return
	}
	rt := time.Since(start)
	r.pd(&perfItem{Name: "request_time", Value: rt.Seconds(), Warn: reqWarn.Seconds(), Crit: reqCrit.Seconds(), Unit: "s"})
	if string(m.Data) != ib {
		r.crit("did not receive expected message")
	}
	thresholds(r, rt, reqWarn, reqCrit, fmt.Sprintf("round trip request took %f", rt.Seconds()),
		fmt.Sprintf("round trip request took %f", rt.Seconds()), fmt.Sprintf("round trip took %fs", rt.Seconds()))
}

func (a *app) checkStreamCmd(f *checkFlags) *cobra.Command {
	var (
		stream                                   string
		lagCrit, peerLagCrit, msgsWarn, msgsCrit uint64
		seenCrit, peerSeenCrit                   time.Duration
		minSources, maxSources, peerExpect       int
		subjectsWarn, subjectsCrit               int
	)
	c := &cobra.Command{
		Use: "stream",
		Example: `  natsio server check stream --stream ORDERS --peer-expect 3
  natsio server check stream --stream BACKUP --lag-critical 100 --seen-critical 1m`,
		Short: "Check a stream: mirror and sources, cluster replicas, messages and subjects",
		Args:  exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			r := &checkResult{Name: stream, Check: "stream"}
			set := func(n string) bool { return changed(c, n) }
			ctx := c.Context()
			nc, js, err := a.jetstream(ctx)
			if r.critIf(err, "connection failed: %v", err) {
				return a.finish(f, r)
			}
			defer nc.Close()
			s, err := js.Stream(ctx, stream)
			if r.critIf(err, "stream load failed: %v", err) {
				return a.finish(f, r)
			}
			si := s.CachedInfo()
			if set("lag-critical") || set("seen-critical") {
				checkMirror(r, si, set("lag-critical"), lagCrit, set("seen-critical"), seenCrit)
				checkSources(r, si, set("lag-critical"), lagCrit, set("seen-critical"), seenCrit)
			}
			if set("min-sources") || set("max-sources") {
				n := len(si.Sources)
				r.pd(&perfItem{Name: "sources", Value: float64(n), Warn: float64(minSources), Crit: float64(maxSources)})
				switch {
				case set("min-sources") && n < minSources, set("max-sources") && n > maxSources:
					r.crit("%d sources", n)
				default:
					r.ok("%d sources", n)
				}
			}
			if set("peer-expect") || set("peer-lag-critical") || set("peer-seen-critical") {
				checkReplicas(r, si.Cluster, si.Config.Replicas, set("peer-expect"), peerExpect, peerLagCrit, peerSeenCrit)
			}
			if set("msgs-warn") || set("msgs-critical") {
				n := si.State.Msgs
				r.pd(&perfItem{Name: "messages", Value: float64(n), Warn: float64(msgsWarn), Crit: float64(msgsCrit)})
				switch {
				case set("msgs-critical") && n <= msgsCrit:
					r.crit("%d messages", n)
				case set("msgs-warn") && n <= msgsWarn:
					r.warn("%d messages", n)
				default:
					r.ok("%d messages", n)
				}
			}
			if set("subjects-warn") || set("subjects-critical") {
				n := si.State.NumSubjects
				r.pd(&perfItem{Name: "subjects", Value: float64(n), Warn: float64(subjectsWarn), Crit: float64(subjectsCrit)})
				// The thresholds invert when warn is above crit: fewer
				// subjects than expected is then the problem.
				inverted := subjectsWarn > subjectsCrit
				switch {
				case set("subjects-critical") && (!inverted && n >= subjectsCrit || inverted && n <= subjectsCrit):
					r.crit("%d subjects", n)
				case set("subjects-warn") && (!inverted && n >= subjectsWarn || inverted && n <= subjectsWarn):
					r.warn("%d subjects", n)
				default:
					r.ok("%d subjects", n)
				}
			}
			if len(r.OKs)+len(r.Warnings)+len(r.Criticals) == 0 {
				r.ok("%d messages", si.State.Msgs)
			}
			return a.finish(f, r)
		},
	}
	fl := c.Flags()
	fl.StringVar(&stream, "stream", "", "the stream to check (required)")
	_ = c.MarkFlagRequired("stream")
	fl.Uint64Var(&lagCrit, "lag-critical", 0, "critical threshold for the lag of any source or mirror, in messages")
	fl.Var(newDuration(&seenCrit, 0), "seen-critical", "critical threshold for how long ago a source or mirror was seen")
	fl.IntVar(&minSources, "min-sources", 0, "the fewest sources to expect")
	fl.IntVar(&maxSources, "max-sources", 0, "the most sources to expect")
	fl.IntVar(&peerExpect, "peer-expect", 0, "the number of cluster replicas to expect")
	fl.Uint64Var(&peerLagCrit, "peer-lag-critical", 0, "critical threshold for a cluster peer's lag, in operations")
	fl.Var(newDuration(&peerSeenCrit, 0), "peer-seen-critical", "critical threshold for how long ago a cluster peer was seen")
	fl.Uint64Var(&msgsWarn, "msgs-warn", 0, "warn when the stream holds this many messages or fewer")
	fl.Uint64Var(&msgsCrit, "msgs-critical", 0, "critical when the stream holds this many messages or fewer")
	fl.IntVar(&subjectsWarn, "subjects-warn", 0, "warning threshold for the stream's subjects (above critical: too few)")
	fl.IntVar(&subjectsCrit, "subjects-critical", 0, "critical threshold for the stream's subjects")
	return c
}

func checkMirror(r *checkResult, si *jsapi.StreamInfo, lagSet bool, lag uint64, seenSet bool, seen time.Duration) {
	m := si.Mirror
	if m == nil {
		if len(si.Sources) == 0 {
			r.crit("not mirrored")
		}
		return
	}
	r.pd(&perfItem{Name: "lag", Value: float64(m.Lag), Crit: float64(lag)},
		&perfItem{Name: "active", Value: m.Active.Seconds(), Crit: seen.Seconds(), Unit: "s"})
	switch {
	case lagSet && m.Lag >= lag:
		r.crit("Mirror Lag %d", m.Lag)
	case seenSet && m.Active >= seen:
		r.crit("Mirror Seen %v", m.Active)
	default:
		r.ok("Mirror %s", m.Name)
	}
}

func checkSources(r *checkResult, si *jsapi.StreamInfo, lagSet bool, lag uint64, seenSet bool, seen time.Duration) {
	if len(si.Sources) == 0 {
		return
	}
	lagged, inactive := 0, 0
	for _, s := range si.Sources {
		if lagSet && s.Lag >= lag {
			lagged++
		}
		if seenSet && s.Active >= seen {
			inactive++
		}
	}
	r.pd(&perfItem{Name: "sources_lagged", Value: float64(lagged)}, &perfItem{Name: "sources_inactive", Value: float64(inactive)})
	if lagged > 0 {
		r.crit("%d sources are lagged", lagged)
	} else {
		r.ok("%d sources current", len(si.Sources))
	}
	if inactive > 0 {
		r.crit("%d sources are inactive", inactive)
	} else {
		r.ok("%d sources active", len(si.Sources))
	}
}

func checkReplicas(r *checkResult, ci *jsapi.ClusterInfo, replicas int, expectSet bool, expect int, lagCrit uint64, seenCrit time.Duration) {
	if ci == nil {
		r.crit("Stream is not clustered")
		return
	}
	if ci.Leader == "" {
		r.crit("No leader")
		return
	}
	peers := len(ci.Replicas) + 1
	r.pd(&perfItem{Name: "peers", Value: float64(peers), Warn: float64(expect), Crit: float64(expect)})
	if expectSet && peers != expect {
		r.crit("Expected %d replicas got %d", expect, peers)
	} else {
		r.ok("%d peers", peers)
	}
	offline, lagged, inactive := 0, 0, 0
	for _, p := range ci.Replicas {
		if p.Offline {
			offline++
		}
		if lagCrit > 0 && p.Lag >= lagCrit {
			lagged++
		}
		if seenCrit > 0 && p.Active >= seenCrit {
			inactive++
		}
	}
	r.pd(&perfItem{Name: "peer_offline", Value: float64(offline)}, &perfItem{Name: "peer_not_current", Value: float64(lagged)},
		&perfItem{Name: "peer_inactive", Value: float64(inactive)})
	if offline > 0 {
		r.crit("%d replicas offline", offline)
	}
	if lagged > 0 {
		r.crit("%d replicas lagged", lagged)
	} else {
		r.ok("replicas are current")
	}
	if inactive > 0 {
		r.crit("%d replicas inactive", inactive)
	} else {
		r.ok("replicas are active")
	}
}

func (a *app) checkConsumerCmd(f *checkFlags) *cobra.Command {
	var (
		stream, consumer                    string
		ackCrit, waitCrit, pendCrit, rdCrit int
		lastDelivery, lastAck               time.Duration
		pinned                              bool
	)
	c := &cobra.Command{
		Use: "consumer",
		Example: `  natsio server check consumer --stream ORDERS --consumer worker --unprocessed-critical 1000
  natsio server check consumer --stream ORDERS --consumer worker --last-ack-critical 5m`,
		Short: "Check a consumer: outstanding acks, waiting pulls, unprocessed and redelivered messages, activity",
		Args:  exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			r := &checkResult{Name: stream + "_" + consumer, Check: "consumer"}
			ctx := c.Context()
			nc, js, err := a.jetstream(ctx)
			if r.critIf(err, "connection failed: %v", err) {
				return a.finish(f, r)
			}
			defer nc.Close()
			ci, err := js.Consumer(ctx, stream, consumer)
			if r.critIf(err, "consumer load failed: %v", err) {
				return a.finish(f, r)
			}
			r.pd(&perfItem{Name: "ack_pending", Value: float64(ci.NumAckPending), Crit: float64(max(ackCrit, 0))},
				&perfItem{Name: "pull_waiting", Value: float64(ci.NumWaiting), Crit: float64(max(waitCrit, 0))},
				&perfItem{Name: "pending", Value: float64(ci.NumPending), Crit: float64(max(pendCrit, 0))},
				&perfItem{Name: "redelivered", Value: float64(ci.NumRedelivered), Crit: float64(max(rdCrit, 0))})
			if !ci.Delivered.LastActive.IsZero() {
				r.pd(&perfItem{Name: "last_delivery", Value: time.Since(ci.Delivered.LastActive).Seconds(), Unit: "s", Crit: lastDelivery.Seconds()})
			}
			if !ci.AckFloor.LastActive.IsZero() {
				r.pd(&perfItem{Name: "last_ack", Value: time.Since(ci.AckFloor.LastActive).Seconds(), Unit: "s", Crit: lastAck.Seconds()})
			}
			if pinned {
				n := 0
				for _, g := range ci.PriorityGroups {
					if g.PinnedClientID != "" {
						n++
					}
				}
				r.pd(&perfItem{Name: "pinned_groups", Value: float64(n)}, &perfItem{Name: "groups", Value: float64(len(ci.Config.PriorityGroups))})
				switch {
				case ci.Config.PriorityPolicy != jsapi.PriorityPinnedClient:
					r.crit("Not pinned client priority mode")
				case n != len(ci.Config.PriorityGroups):
					r.crit("%d / %d pinned clients", n, len(ci.Config.PriorityGroups))
				default:
					r.ok("%d pinned clients", n)
				}
			}
			if lastAck > 0 {
				switch {
				case ci.AckFloor.LastActive.IsZero():
					r.crit("No acks")
				case time.Since(ci.AckFloor.LastActive) > lastAck:
					r.crit("Last ack %v ago", time.Since(ci.AckFloor.LastActive).Round(time.Millisecond))
				default:
					r.ok("Last ack %v", ci.AckFloor.LastActive.Format(time.RFC3339))
				}
			}
			if lastDelivery > 0 {
				switch {
				case ci.Delivered.LastActive.IsZero():
					r.crit("No deliveries")
				case time.Since(ci.Delivered.LastActive) > lastDelivery:
					r.crit("Last delivery %v ago", time.Since(ci.Delivered.LastActive).Round(time.Millisecond))
				default:
					r.ok("Last delivery %v", ci.Delivered.LastActive.Format(time.RFC3339))
				}
			}
			limit := func(crit int, v uint64, what string) {
				if crit < 0 {
					return
				}
				if v >= uint64(crit) {
					r.crit("%s: %v", what, v)
				} else {
					r.ok("%s: %v", what, v)
				}
			}
			limit(rdCrit, uint64(ci.NumRedelivered), "Redelivered")
			limit(pendCrit, ci.NumPending, "Unprocessed Messages")
			limit(waitCrit, uint64(ci.NumWaiting), "Waiting Pulls")
			limit(ackCrit, uint64(ci.NumAckPending), "Ack Pending")
			if len(r.OKs)+len(r.Warnings)+len(r.Criticals) == 0 {
				r.ok("consumer %s of %s exists", consumer, stream)
			}
			return a.finish(f, r)
		},
	}
	fl := c.Flags()
	fl.StringVar(&stream, "stream", "", "the stream of the consumer (required)")
	fl.StringVar(&consumer, "consumer", "", "the consumer to check (required)")
	_ = c.MarkFlagRequired("stream")
	_ = c.MarkFlagRequired("consumer")
	fl.IntVar(&ackCrit, "outstanding-ack-critical", -1, "the most outstanding acks to allow (-1: no check)")
	fl.IntVar(&waitCrit, "waiting-critical", -1, "the most waiting pulls to allow (-1: no check)")
	fl.IntVar(&pendCrit, "unprocessed-critical", -1, "the most unprocessed messages to allow (-1: no check)")
	fl.Var(newDuration(&lastDelivery, 0), "last-delivery-critical", "the longest time to allow since the last delivery (0: no check)")
	fl.Var(newDuration(&lastAck, 0), "last-ack-critical", "the longest time to allow since the last ack (0: no check)")
	fl.IntVar(&rdCrit, "redelivery-critical", -1, "the most redeliveries to allow (-1: no check)")
	fl.BoolVar(&pinned, "pinned", false, "require pinned-client priority with a pinned client in every group")
	return c
}

func (a *app) checkJetStreamCmd(f *checkFlags) *cobra.Command {
	var (
		memWarn, memCrit, storeWarn, storeCrit       int
		streamsWarn, streamsCrit, consWarn, consCrit int
		replicas                                     bool
		seenCrit                                     time.Duration
		lagCrit                                      uint64
	)
	c := &cobra.Command{
		Use: "jetstream",
		Example: `  natsio server check jetstream
  natsio server check js --mem-warn 60 --store-critical 95 --format json`,
		Aliases: []string{"js"},
		Short:   "Check the account's JetStream: usage against its limits and the health of stream replicas",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			r := &checkResult{Name: "JetStream", Check: "jetstream"}
			ctx := c.Context()
			nc, js, err := a.jetstream(ctx)
			if r.critIf(err, "connection failed: %v", err) {
				return a.finish(f, r)
			}
			defer nc.Close()
			info, err := js.AccountInfo(ctx)
			if r.critIf(err, "JetStream not available: %s", err) {
				return a.finish(f, r)
			}
			if replicas {
				checkStreamReplicas(ctx, r, js, seenCrit, lagCrit)
			}
			usage := func(item, unit string, warn, crit int, limit int64, cur uint64) {
				pct := 0
				if limit > 0 {
					pct = int(float64(cur) / float64(limit) * 100)
				}
				r.pd(&perfItem{Name: item, Value: float64(cur), Unit: unit},
					&perfItem{Name: item + "_pct", Value: float64(pct), Unit: "%", Warn: float64(max(warn, 0)), Crit: float64(max(crit, 0))})
				switch {
				case warn != -1 && crit != -1 && warn >= crit:
					r.crit("%s: invalid thresholds", item)
				case pct > 100:
					r.crit("%s: exceed server limits", item)
				case warn >= 0 && crit >= 0 && pct > crit:
					r.crit("%d%% %s", pct, item)
				case warn >= 0 && crit >= 0 && pct > warn:
					r.warn("%d%% %s", pct, item)
				}
			}
			usage("memory", "B", memWarn, memCrit, info.Limits.MaxMemory, info.Memory)
			usage("storage", "B", storeWarn, storeCrit, info.Limits.MaxStore, info.Store)
			usage("streams", "", streamsWarn, streamsCrit, int64(info.Limits.MaxStreams), uint64(info.Streams))
			usage("consumers", "", consWarn, consCrit, int64(info.Limits.MaxConsumers), uint64(info.Consumers))
			if len(r.Warnings)+len(r.Criticals) == 0 {
				r.ok("%d streams, %d consumers, %s memory, %s storage", info.Streams, info.Consumers, humanBytes(info.Memory), humanBytes(info.Store))
			}
			return a.finish(f, r)
		},
	}
	fl := c.Flags()
	fl.IntVar(&memWarn, "mem-warn", 75, "warning threshold for memory storage, in percent of the limit")
	fl.IntVar(&memCrit, "mem-critical", 90, "critical threshold for memory storage, in percent of the limit")
	fl.IntVar(&storeWarn, "store-warn", 75, "warning threshold for file storage, in percent of the limit")
	fl.IntVar(&storeCrit, "store-critical", 90, "critical threshold for file storage, in percent of the limit")
	fl.IntVar(&streamsWarn, "streams-warn", -1, "warning threshold for streams, in percent of the limit")
	fl.IntVar(&streamsCrit, "streams-critical", -1, "critical threshold for streams, in percent of the limit")
	fl.IntVar(&consWarn, "consumers-warn", -1, "warning threshold for consumers, in percent of the limit")
	fl.IntVar(&consCrit, "consumers-critical", -1, "critical threshold for consumers, in percent of the limit")
	fl.BoolVar(&replicas, "replicas", true, "check that every stream has healthy replicas")
	fl.Var(newDuration(&seenCrit, 5*time.Second), "replica-seen-critical", "critical threshold for when a replica was last seen")
	fl.Uint64Var(&lagCrit, "replica-lag-critical", 200, "critical threshold for how many operations a replica may be behind")
	return c
}

// checkStreamReplicas counts the streams whose replicas are unhealthy.
func checkStreamReplicas(ctx context.Context, r *checkResult, js *jsapi.JS, seenCrit time.Duration, lagCrit uint64) {
	var okCnt, noLeader, missing, lagged, notSeen, failed int
	for si, err := range js.Streams(ctx, "") {
		if err != nil {
			r.crit("JetStream not available: %s", err)
			return
		}
		if si.Config.Replicas <= 1 {
			okCnt++
			continue
		}
		ci := si.Cluster
		switch {
		case ci == nil:
			failed++
			continue
		case ci.Leader == "":
			noLeader++
			continue
		case len(ci.Replicas) != si.Config.Replicas-1:
			missing++
			continue
		}
		healthy := true
		for _, p := range ci.Replicas {
			if p.Offline {
				failed++
				healthy = false
				break
			}
			if seenCrit > 0 && p.Active > seenCrit {
				notSeen++
				healthy = false
				break
			}
			if lagCrit > 0 && p.Lag > lagCrit {
				lagged++
				healthy = false
				break
			}
		}
		if healthy {
			okCnt++
		}
	}
	r.pd(&perfItem{Name: "replicas_ok", Value: float64(okCnt)}, &perfItem{Name: "replicas_no_leader", Value: float64(noLeader)},
		&perfItem{Name: "replicas_missing_replicas", Value: float64(missing)}, &perfItem{Name: "replicas_lagged", Value: float64(lagged)},
		&perfItem{Name: "replicas_not_seen", Value: float64(notSeen)}, &perfItem{Name: "replicas_fail", Value: float64(failed)})
	if bad := noLeader + missing + lagged + notSeen + failed; bad > 0 {
		r.crit("%d unhealthy streams", bad)
	}
}
