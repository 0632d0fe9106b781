package pull

// Internal test of the pull status classifier (status.go): the exact
// status lines nats-server 2.15.2 sends to pull requests
// (server/consumer.go, server/jetstream.go), their typed errors, and what
// Fetch and Messages do with each of them.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// fetchOutcome is what Fetch does on a status that arrives before any
// message: end with the messages so far and no error, or fail with it.
type fetchOutcome int

const (
	fetchContinues fetchOutcome = iota // not an end (heartbeat, unconfirmed)
	fetchEmpty                         // ends at once, no message, no error
	fetchError                         // ends with the status error
)

// messagesOutcome is what Messages does on a status for its only pull.
type messagesOutcome int

const (
	messagesIgnores  messagesOutcome = iota // nothing (heartbeat, unconfirmed)
	messagesRepulls                         // reports it, pulls again
	messagesTerminal                        // ends with the status error
)

type statusCase struct {
	name         string
	code         int
	desc         string
	pending      bool // Nats-Pending-Messages: 10, Nats-Pending-Bytes: pendingBytes
	pendingBytes int
	maxBytes     int    // MaxBytes of the Messages run (0: none)
	extra        string // more header lines ("K: v\r\n")
	kind         error  // nil: no error (heartbeat)
	terminal     bool   // claimsEnd(Kind): a status claiming an end
	info         string // what consumer info answers (see statusCases)
	unconfirmed  bool   // Messages reports ErrUnconfirmedStatus
	group        string // the priority group the reads pull in
	fetch        fetchOutcome
	messages     messagesOutcome
}

// statusCases are the status lines of nats-server 2.15.2 for pulls, word
// for word (server/consumer.go: 54, 3221, 3238, 4441, 4463, 4503, 4539,
// 4555, 4611, 4618, 4693-4809, 5134, 5658, 5966; server/jetstream.go:
// 1019).
//
// info is what consumer info answers for the consumer while the case
// runs: "" a consumer that exists and accepts the pulls, "gone" none, or
// the JSON of its configuration. A status claiming a terminal condition
// ends a read only when info confirms it; the others are ignored (and,
// for Messages, reported as ErrUnconfirmedStatus: unconfirmed).
var statusCases = []statusCase{
	{name: "100 idle heartbeat", code: 100, desc: "Idle Heartbeat", extra: "Nats-Last-Consumer: 0\r\nNats-Last-Stream: 0\r\n",
		fetch: fetchContinues, messages: messagesIgnores},
	{name: "100 flow control", code: 100, desc: "FlowControl Request", fetch: fetchContinues, messages: messagesIgnores},
	// The reads here are not no-wait: the server sends them no 404, and a
	// 408 only once the pull expired (a Fetch waits 10 s), always with
	// the pull's counts. Earlier, or without counts, they are another
	// client's: ignored (NoWait Fetches end on them: fetchsub_test.go,
	// TestDeadlineRule).
	{name: "404 no messages", code: 404, desc: "No Messages", kind: ErrNoMessages, unconfirmed: true,
		fetch: fetchContinues, messages: messagesIgnores},
	{name: "408 request timeout with pending", code: 408, desc: "Request Timeout", pending: true,
		kind: ErrRequestExpired, fetch: fetchContinues, messages: messagesRepulls},
	{name: "408 request timeout without pending", code: 408, desc: "Request Timeout", unconfirmed: true,
		kind: ErrRequestExpired, fetch: fetchContinues, messages: messagesIgnores},
	{name: "408 requests pending", code: 408, desc: "Requests Pending", kind: ErrRequestExpired, unconfirmed: true,
		fetch: fetchContinues, messages: messagesIgnores},
	{name: "408 interest expired", code: 408, desc: "Interest Expired", pending: true,
		kind: ErrRequestExpired, fetch: fetchContinues, messages: messagesRepulls},
	{name: "409 consumer deleted", code: 409, desc: "Consumer Deleted", kind: ErrConsumerDeleted, terminal: true, info: "gone",
		fetch: fetchError, messages: messagesTerminal},
	{name: "409 consumer deleted, consumer exists", code: 409, desc: "Consumer Deleted", kind: ErrConsumerDeleted, terminal: true,
		unconfirmed: true, fetch: fetchContinues, messages: messagesIgnores},
	{name: "409 push based", code: 409, desc: "Consumer is push based", kind: ErrPushConsumer, terminal: true,
		info: `{"deliver_subject":"push.x"}`, fetch: fetchError, messages: messagesTerminal},
	{name: "409 push based, pull consumer", code: 409, desc: "Consumer is push based", kind: ErrPushConsumer, terminal: true,
		unconfirmed: true, fetch: fetchContinues, messages: messagesIgnores},
	{name: "409 batch completed", code: 409, desc: "Batch Completed", pending: true,
		kind: ErrRequestExpired, fetch: fetchEmpty, messages: messagesRepulls},
	{name: "409 server shutdown", code: 409, desc: "Server Shutdown", pending: true,
		kind: ErrRequestExpired, fetch: fetchEmpty, messages: messagesRepulls},
	{name: "409 max request batch", code: 409, desc: "Exceeded MaxRequestBatch of 5", kind: ErrBadPull, terminal: true,
		info: `{"max_batch":5}`, fetch: fetchError, messages: messagesTerminal},
	{name: "409 max request batch, batch allowed", code: 409, desc: "Exceeded MaxRequestBatch of 5", kind: ErrBadPull, terminal: true,
		unconfirmed: true, info: `{"max_batch":50}`, fetch: fetchContinues, messages: messagesIgnores},
	{name: "409 max waiting", code: 409, desc: "Exceeded MaxWaiting", kind: ErrMaxWaiting,
		fetch: fetchError, messages: messagesRepulls},
	{name: "409 max request expires", code: 409, desc: "Exceeded MaxRequestExpires of 1s", kind: ErrBadPull, terminal: true,
		info: `{"max_expires":1000000000}`, fetch: fetchError, messages: messagesTerminal},
	{name: "409 max request expires, unconfirmed", code: 409, desc: "Exceeded MaxRequestExpires of 1s", kind: ErrBadPull, terminal: true,
		unconfirmed: true, fetch: fetchContinues, messages: messagesIgnores},
	{name: "409 max request max bytes", code: 409, desc: "Exceeded MaxRequestMaxBytes of 100", kind: ErrBadPull, terminal: true,
		maxBytes: 1000, info: `{"max_bytes":100}`, fetch: fetchError, messages: messagesTerminal},
	{name: "409 max request max bytes, unconfirmed", code: 409, desc: "Exceeded MaxRequestMaxBytes of 100", kind: ErrBadPull, terminal: true,
		maxBytes: 1000, unconfirmed: true, fetch: fetchContinues, messages: messagesIgnores},
	// The next message is larger than what is left of the pull: that pull
	// ends (ADR-37: not telegraphed as an error), Messages pulls again.
	{name: "409 message size exceeds max bytes, budget unused", code: 409, desc: "Message Size Exceeds MaxBytes",
		pending: true, pendingBytes: 1000, maxBytes: 1000, kind: ErrMessageTooLarge, fetch: fetchError, messages: messagesRepulls},
	{name: "409 message size exceeds max bytes, budget spent", code: 409, desc: "Message Size Exceeds MaxBytes",
		pending: true, pendingBytes: 400, maxBytes: 1000, kind: ErrMessageTooLarge, fetch: fetchError, messages: messagesRepulls},
	{name: "409 leadership change", code: 409, desc: "Leadership Change", kind: ErrLeadershipChange,
		fetch: fetchError, messages: messagesRepulls},
	// The pulls here ask for no heartbeat above half their expiry and no
	// priority group: consumer info cannot confirm these 400s (a server
	// sends them to other pulls only), nor a 412 (for a pull that asks
	// for an API level; these ask for none).
	{name: "400 bad request", code: 400, desc: "Bad Request - heartbeat value too large", kind: ErrBadPull, terminal: true,
		unconfirmed: true, fetch: fetchContinues, messages: messagesIgnores},
	{name: "400 not overflow", code: 400, desc: "Bad Request - Not a Overflow Priority consumer", kind: ErrBadPull, terminal: true,
		unconfirmed: true, fetch: fetchContinues, messages: messagesIgnores},
	{name: "400 invalid group", code: 400, desc: "Bad Request - Invalid Priority Group", kind: ErrBadPull, terminal: true,
		unconfirmed: true, fetch: fetchContinues, messages: messagesIgnores},
	// A 400 for a pull in a priority group, confirmed: the consumer's
	// policy no longer has the group.
	{name: "400 invalid group, confirmed", code: 400, desc: "Bad Request - Invalid Priority Group", kind: ErrBadPull, terminal: true,
		group: "g", info: `{"priority_policy":"overflow","priority_groups":["other"]}`, fetch: fetchError, messages: messagesTerminal},
	{name: "412 required api level", code: 412, desc: "Required Api Level", kind: ErrBadPull, terminal: true,
		unconfirmed: true, fetch: fetchContinues, messages: messagesIgnores},
	// A status this client does not know (a newer server): reported,
	// not terminal, and not taken for a normal end.
	{name: "409 unknown", code: 409, desc: "Something New", kind: ErrUnknownStatus,
		fetch: fetchError, messages: messagesRepulls},
	{name: "418 unknown code", code: 418, desc: "I'm a teapot", kind: ErrUnknownStatus,
		fetch: fetchError, messages: messagesRepulls},
	{name: "423 pin id mismatch", code: 423, desc: "Nats-Pin-Id mismatch", kind: ErrPinMismatch,
		fetch: fetchError, messages: messagesRepulls},
	{name: "423 wrong pin id", code: 423, desc: "Nats-Wrong-Pin-Id", pending: true, kind: ErrPinMismatch,
		fetch: fetchError, messages: messagesRepulls},
}

func (c *statusCase) header() string {
	h := fmt.Sprintf("NATS/1.0 %d %s\r\n", c.code, c.desc)
	if c.pending {
		h += fmt.Sprintf("Nats-Pending-Messages: 10\r\nNats-Pending-Bytes: %d\r\n", c.pendingBytes)
	}
	return h + c.extra + "\r\n"
}

// F19/F21 (R-F21): every status line the server sends to a pull decodes
// to its code, description and pending counts, and classifies to its
// typed error (a *jsapi.StatusError matching the ErrXxx kind) with the
// documented terminal flag; a heartbeat is no error, and a message with a
// payload is not a status.
func TestStatusClassifierTable(t *testing.T) {
	for _, tc := range statusCases {
		t.Run(tc.name, func(t *testing.T) {
			m := &conn.Msg{Subject: "_INBOX.x", Header: proto.HeaderFromBlock([]byte(tc.header()))}
			if !isStatus(m) {
				t.Fatal("isStatus: false")
			}
			st, ok := parseStatus(m)
			if !ok || st.code != tc.code || st.desc != tc.desc {
				t.Fatalf("parseStatus: %+v %v", st, ok)
			}
			if st.hasPending != tc.pending || (tc.pending && (st.pendingMsgs != 10 || st.pendingBytes != tc.pendingBytes)) {
				t.Fatalf("pending counts: %+v", st)
			}
			err := st.err()
			if tc.kind == nil {
				if err != nil {
					t.Fatalf("err: %v, want none", err)
				}
				return
			}
			var se *jsapi.StatusError
			if !errors.Is(err, tc.kind) || !errors.As(err, &se) {
				t.Fatalf("err: %v, want a *jsapi.StatusError matching %v", err, tc.kind)
			}
			if se.Code != tc.code || se.Description != tc.desc || claimsEnd(se.Kind) != tc.terminal {
				t.Fatalf("StatusError %d %q terminal %v, want %d %q terminal %v", se.Code, se.Description, claimsEnd(se.Kind),
					tc.code, tc.desc, tc.terminal)
			}
			for _, other := range []error{ErrNoMessages, ErrConsumerDeleted, ErrPushConsumer, ErrBadPull, ErrRequestExpired,
				ErrLeadershipChange, ErrPinMismatch, ErrMaxWaiting, ErrMessageTooLarge, ErrUnknownStatus} {
				if other != tc.kind && errors.Is(err, other) {
					t.Fatalf("err %v also matches %v", err, other)
				}
			}
			if !strings.Contains(err.Error(), fmt.Sprint(tc.code)) || !strings.Contains(err.Error(), tc.desc) {
				t.Fatalf("message %q lacks the status", err.Error())
			}
		})
	}

	// A status line without description (503 no responders).
	st, ok := parseStatus(&conn.Msg{Header: proto.HeaderFromBlock([]byte("NATS/1.0 503\r\n\r\n"))})
	if !ok || st.code != 503 || !errors.Is(st.err(), conn.ErrNoResponders) {
		t.Fatalf("503: %+v %v %v", st, ok, st.err())
	}
	// A message with a payload is not a status, whatever its header.
	m := &conn.Msg{Header: proto.HeaderFromBlock([]byte("NATS/1.0 408 Request Timeout\r\n\r\n")), Data: []byte("x")}
	if isStatus(m) {
		t.Fatal("a message with a payload taken for a status")
	}
	if _, ok := parseStatus(m); ok {
		t.Fatal("parseStatus of a message with a payload")
	}
	// Ordinary headers without a status line.
	if _, ok := parseStatus(&conn.Msg{Header: proto.HeaderFromBlock([]byte("NATS/1.0\r\nA: b\r\n\r\n"))}); ok {
		t.Fatal("a plain header taken for a status")
	}
}

// injector publishes raw HPUBs (status lines included, which a client's
// header type cannot write) over its own TCP connection to the server.
type injector struct {
	mu   sync.Mutex
	c    net.Conn
	done chan struct{}
}

func newInjector(t *testing.T, url string) *injector {
	t.Helper()
	c, r := testutil.RawConn(t, url, 60*time.Second)
	in := &injector{c: c, done: make(chan struct{})}
	go func() {
		defer close(in.done)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if line == "PING\r\n" {
				in.mu.Lock()
				fmt.Fprint(c, "PONG\r\n")
				in.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { c.Close(); <-in.done })
	return in
}

func (in *injector) send(t *testing.T, subject, hdr, payload string) {
	t.Helper()
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, err := fmt.Fprintf(in.c, "HPUB %s %d %d\r\n%s%s\r\n", subject, len(hdr), len(hdr)+len(payload), hdr, payload); err != nil {
		t.Fatal(err)
	}
}

// F19/F21 (R-F21), end to end: each status line reaches Fetch and Messages
// as the server sends it (through a real nats-server, from a scripted
// responder standing in for the consumer) and they react as documented.
// Fetch ends empty with no error on 409 Batch Completed / Server Shutdown,
// ignores heartbeats, statuses the server does not send to its pull and
// unconfirmed ones, and fails with the typed error on the rest (confirmed,
// or ending its pull only). Messages pulls again after the non-terminal
// ones, ignores heartbeats and the same statuses, and ends with the typed
// error on the confirmed terminal ones.
//
// After a heartbeat, both read on to the message that follows. A client
// cannot publish a delivery (nats-server refuses a reply starting with
// "$JS." from a client), so the one that follows here is a plain message,
// which both skip and count as stray (ErrStrayMessage): Fetch then ends
// on the 404 after it, and Messages reports it to OnError.
func TestStatusFetchAndMessagesReactions(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	in := newInjector(t, s.URL())
	// Consumer info, which a status claiming a terminal condition must be
	// confirmed with, answers as the case says (statusCases).
	var imu sync.Mutex
	infoOf := map[string]string{}
	info, err := nc.SubscribeFunc("$JS.API.CONSUMER.INFO.S.*", func(m *conn.Msg) {
		name := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
		imu.Lock()
		cfg := infoOf[name]
		imu.Unlock()
		switch cfg {
		case "gone":
			m.Respond([]byte(`{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":404,"err_code":10014,"description":"consumer not found"}}`))
			return
		case "":
			cfg = "{}"
		}
		m.Respond([]byte(`{"type":"io.nats.jetstream.api.v1.consumer_info_response","stream_name":"S","name":"` + name + `","config":` + cfg + `}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer info.Unsubscribe()

	for i, tc := range statusCases {
		name := fmt.Sprintf("C%d", i)
		// pulls yields the reply subject of each pull request for the
		// consumer S/<name>.
		pulls := make(chan string, 64)
		sub, err := nc.SubscribeFunc("$JS.API.CONSUMER.MSG.NEXT.S."+name, func(m *conn.Msg) {
			select {
			case pulls <- m.Reply:
			default:
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		nextPull := func(t *testing.T) string {
			t.Helper()
			select {
			case r := <-pulls:
				return r
			case <-time.After(10 * time.Second):
				t.Fatal("no pull request")
				return ""
			}
		}
		imu.Lock()
		infoOf[name] = tc.info
		imu.Unlock()
		cached := &jsapi.ConsumerInfo{Stream: "S", Name: name}
		var readOpts []Opt
		var fetchOpts []FetchOpt
		if tc.group != "" {
			cached.Config.PriorityPolicy = jsapi.PriorityOverflow
			cached.Config.PriorityGroups = []string{tc.group}
			readOpts = append(readOpts, Group(tc.group))
			fetchOpts = append(fetchOpts, FetchGroup(tc.group))
		}
		if tc.maxBytes > 0 {
			readOpts = append(readOpts, MaxBytes(tc.maxBytes))
			fetchOpts = append(fetchOpts, FetchMaxBytes(tc.maxBytes))
		}
		c := newConsumer(js, cached)

		t.Run("Fetch/"+tc.name, func(t *testing.T) {
			fctx, fcancel := context.WithTimeout(ctx, 10*time.Second)
			defer fcancel()
			type result struct {
				msgs []*jsapi.Msg
				err  error
			}
			done := make(chan result, 1)
			go func() {
				msgs, err := c.Fetch(fctx, 10, fetchOpts...)
				done <- result{msgs, err}
			}()
			reply := nextPull(t)
			in.send(t, reply, tc.header(), "")
			skipped := c.Stats().Skipped
			if tc.fetch == fetchContinues {
				// Not an end: the message after it is read (and skipped:
				// no $JS.ACK reply), then a 409 Batch Completed ends the
				// pull. (An
				// unconfirmed status is ignored once consumer info has
				// answered, which the Fetch asks before it reads on.)
				in.send(t, reply, "NATS/1.0\r\nA: b\r\n\r\n", "after")
				in.send(t, reply, "NATS/1.0 409 Batch Completed\r\nNats-Pending-Messages: 10\r\nNats-Pending-Bytes: 0\r\n\r\n", "")
			}
			r := <-done
			switch tc.fetch {
			case fetchContinues:
				if r.err != nil || len(r.msgs) != 0 || c.Stats().Skipped != skipped+1 {
					t.Fatalf("Fetch: %d messages, %v, %d skipped; want the one after the status read and skipped, then an empty end",
						len(r.msgs), r.err, c.Stats().Skipped-skipped)
				}
			case fetchEmpty:
				if r.err != nil || len(r.msgs) != 0 || fctx.Err() != nil {
					t.Fatalf("Fetch: %d messages, %v (ctx %v); want an empty end at once", len(r.msgs), r.err, fctx.Err())
				}
			case fetchError:
				var se *jsapi.StatusError
				if len(r.msgs) != 0 || !errors.Is(r.err, tc.kind) || !errors.As(r.err, &se) || se.Code != tc.code {
					t.Fatalf("Fetch: %d messages, %v; want %v (%d)", len(r.msgs), r.err, tc.kind, tc.code)
				}
			}
		})

		t.Run("Messages/"+tc.name, func(t *testing.T) {
			// A handle of its own: consumer info asked during the Fetch
			// may have changed the first one's cached configuration.
			c := newConsumer(js, cached)
			mctx, mcancel := context.WithCancel(ctx)
			defer mcancel()
			opts := append([]Opt{MaxMessages(10), Expires(time.Minute)}, readOpts...)
			var reported []error
			var rmu sync.Mutex
			strays := make(chan struct{}, 16)
			opts = append(opts, OnError(func(err error) {
				rmu.Lock()
				reported = append(reported, err)
				rmu.Unlock()
				if errors.Is(err, ErrStrayMessage) {
					strays <- struct{}{}
				}
			}))
			type item struct {
				m   *jsapi.Msg
				err error
			}
			items := make(chan item, 16)
			go func() {
				defer close(items)
				for m, err := range c.Messages(mctx, opts...) {
					items <- item{m, err}
				}
			}()
			next := func() item {
				t.Helper()
				select {
				case it := <-items:
					return it
				case <-time.After(10 * time.Second):
					t.Fatal("Messages yielded nothing")
					return item{}
				}
			}
			reply := nextPull(t)
			in.send(t, reply, tc.header(), "")
			switch tc.messages {
			case messagesIgnores:
				in.send(t, reply, "NATS/1.0\r\nA: b\r\n\r\n", "after")
				select {
				case <-strays: // read past the status, skipped as stray
				case it := <-items:
					t.Fatalf("Messages yielded %+v; want the message after the heartbeat read and skipped", it)
				case <-time.After(10 * time.Second):
					t.Fatal("the message after the heartbeat was not read")
				}
			case messagesRepulls:
				nextPull(t) // pulls again…
			case messagesTerminal:
				it := next()
				var se *jsapi.StatusError
				if it.m != nil || !errors.Is(it.err, tc.kind) || !errors.As(it.err, &se) || se.Code != tc.code {
					t.Fatalf("Messages yielded %+v; want the terminal %v", it, tc.kind)
				}
				if _, ok := <-items; ok {
					t.Fatal("Messages went on after a terminal status")
				}
				return
			}
			// …and did not end: stopping it now ends it with ctx's error.
			mcancel()
			it := next()
			if it.m != nil || !errors.Is(it.err, context.Canceled) {
				t.Fatalf("Messages ended with %+v; want context.Canceled", it)
			}
			if _, ok := <-items; ok {
				t.Fatal("Messages went on after its end")
			}
			rmu.Lock()
			defer rmu.Unlock()
			switch {
			case tc.unconfirmed:
				if len(reported) == 0 || !errors.Is(reported[0], ErrUnconfirmedStatus) || errors.Is(reported[0], tc.kind) {
					t.Fatalf("OnError got %v; want ErrUnconfirmedStatus first (not matching %v)", reported, tc.kind)
				}
			case tc.messages == messagesRepulls && !errors.Is(tc.kind, ErrRequestExpired):
				if len(reported) == 0 || !errors.Is(reported[0], tc.kind) {
					t.Fatalf("OnError got %v; want %v", reported, tc.kind)
				}
			}
		})
		sub.Unsubscribe()
	}
}
