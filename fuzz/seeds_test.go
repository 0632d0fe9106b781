package fuzz

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/fuzz/*/seed-* from the seed lists")

// seed is one seed corpus entry: a file name (without "seed-") and the
// fuzz target's arguments.
type seed struct {
	name string
	args []any
}

// parserSeed is a stream as a server (or, for the client-* entries, a
// client) sends it.
type parserSeed struct {
	name string
	data string
}

// parserSeeds seed FuzzParserSplits and FuzzParserDifferential. The
// capture-* entries are byte for byte what nats-server 2.15.2 sent to a raw
// TCP client (JetStream enabled, one with user/password auth and
// permissions, one with a 200 ms ping interval, one in a two-node
// cluster). The others are shaped like server output, client output or
// deliberately malformed.
var parserSeeds = []parserSeed{
	{"capture-info-jetstream", "INFO {\"server_id\":\"NA6TID5HBEK22APC63TFYFKLUYRDCLQTTFD76UL42R4V5MDSOYOKO4JP\",\"server_name\":\"n1\",\"version\":\"2.15.2\",\"proto\":1,\"go\":\"go1.26.8\",\"host\":\"127.0.0.1\",\"port\":35387,\"headers\":true,\"max_payload\":1048576,\"jetstream\":true,\"client_id\":5,\"client_ip\":\"127.0.0.1\",\"api_lvl\":5,\"xkey\":\"XDYIP2QTDIBYBJZ55L6JQJTD4OX62QDPPW7FN5JUMIOOUJ43PFJDTTUR\"} \r\n"},
	{"capture-pong-connect-info", "PONG\r\nINFO {\"server_id\":\"NA6TID5HBEK22APC63TFYFKLUYRDCLQTTFD76UL42R4V5MDSOYOKO4JP\",\"server_name\":\"n1\",\"version\":\"2.15.2\",\"proto\":1,\"go\":\"go1.26.8\",\"host\":\"127.0.0.1\",\"port\":35387,\"headers\":true,\"max_payload\":1048576,\"jetstream\":true,\"client_id\":5,\"client_ip\":\"127.0.0.1\",\"connect_info\":true,\"remote_account\":\"$G\",\"api_lvl\":5,\"xkey\":\"XDYIP2QTDIBYBJZ55L6JQJTD4OX62QDPPW7FN5JUMIOOUJ43PFJDTTUR\"} \r\n"},
	{"capture-msgs", "MSG foo 1 5\r\nhello\r\nMSG foo 1 reply.x 3\r\nabc\r\nHMSG foo 1 21 26\r\nNATS/1.0\r\nX-Id: 7\r\n\r\nhello\r\nHMSG foo 1 _INBOX.abc.1 12 12\r\nNATS/1.0\r\n\r\n\r\nHMSG _INBOX.abc.2 2 43 43\r\nNATS/1.0 503\r\nNats-Subject: nobody.here\r\n\r\n\r\nPONG\r\n"},
	{"capture-stream-create", "MSG _INBOX.abc.3 2 829\r\n{\"type\":\"io.nats.jetstream.api.v1.stream_create_response\",\"config\":{\"name\":\"ORDERS\",\"subjects\":[\"ORDERS.\\u003e\"],\"retention\":\"limits\",\"max_consumers\":-1,\"max_msgs\":-1,\"max_bytes\":-1,\"max_age\":0,\"max_msgs_per_subject\":-1,\"max_msg_size\":-1,\"discard\":\"old\",\"storage\":\"memory\",\"num_replicas\":1,\"duplicate_window\":120000000000,\"compression\":\"none\",\"allow_direct\":false,\"mirror_direct\":false,\"sealed\":false,\"deny_delete\":false,\"deny_purge\":false,\"allow_rollup_hdrs\":false,\"consumer_limits\":{},\"allow_msg_ttl\":false,\"metadata\":{\"_nats.level\":\"5\",\"_nats.req.level\":\"0\",\"_nats.ver\":\"2.15.2\"}},\"created\":\"2026-11-29T17:40:49.355793622Z\",\"state\":{\"messages\":0,\"bytes\":0,\"first_seq\":0,\"first_ts\":\"0001-01-01T00:00:00Z\",\"last_seq\":0,\"last_ts\":\"0001-01-01T00:00:00Z\",\"consumer_count\":0},\"ts\":\"2026-11-29T17:40:49.355906481Z\",\"did_create\":true}\r\n"},
	{"capture-js-pub-acks", "MSG _INBOX.abc.4 2 27\r\n{\"stream\":\"ORDERS\",\"seq\":1}\r\nMSG _INBOX.abc.5 2 27\r\n{\"stream\":\"ORDERS\",\"seq\":2}\r\n"},
	{"capture-consumer-create", "MSG _INBOX.abc.6 2 625\r\n{\"type\":\"io.nats.jetstream.api.v1.consumer_create_response\",\"stream_name\":\"ORDERS\",\"name\":\"C\",\"created\":\"2026-11-29T17:40:49.860116509Z\",\"config\":{\"durable_name\":\"C\",\"name\":\"C\",\"deliver_policy\":\"all\",\"ack_policy\":\"explicit\",\"ack_wait\":30000000000,\"max_deliver\":-1,\"replay_policy\":\"instant\",\"max_waiting\":512,\"max_ack_pending\":1000,\"num_replicas\":0,\"metadata\":{\"_nats.level\":\"5\",\"_nats.req.level\":\"0\",\"_nats.ver\":\"2.15.2\"}},\"delivered\":{\"consumer_seq\":0,\"stream_seq\":0},\"ack_floor\":{\"consumer_seq\":0,\"stream_seq\":0},\"num_ack_pending\":0,\"num_redelivered\":0,\"num_waiting\":0,\"num_pending\":2,\"ts\":\"2026-11-29T17:40:49.860199036Z\"}\r\n"},
	{"capture-pull-2", "MSG ORDERS.new 2 $JS.ACK.ORDERS.C.1.1.1.1795974049657749860.1 24\r\n{\"id\":1,\"item\":\"widget\"}\r\nMSG ORDERS.new 2 $JS.ACK.ORDERS.C.1.2.2.1795974049657766303.0 24\r\n{\"id\":2,\"item\":\"gadget\"}\r\n"},
	{"capture-pull-no-wait-empty", "HMSG _INBOX.abc.8 2 28 28\r\nNATS/1.0 404 No Messages\r\n\r\n\r\n"},
	{"capture-pull-expires", "HMSG _INBOX.abc.9 2 81 81\r\nNATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 5\r\nNats-Pending-Bytes: 0\r\n\r\n\r\nPING\r\n"},
	{"capture-consumer-deleted", "HMSG _INBOX.abc.10 2 33 33\r\nNATS/1.0 409 Consumer Deleted\r\n\r\n\r\nMSG _INBOX.abc.11 2 75\r\n{\"type\":\"io.nats.jetstream.api.v1.consumer_delete_response\",\"success\":true}\r\n"},
	{"capture-push-heartbeats", "MSG _INBOX.abc.12 2 663\r\n{\"type\":\"io.nats.jetstream.api.v1.consumer_create_response\",\"stream_name\":\"ORDERS\",\"name\":\"P\",\"created\":\"2026-11-29T17:40:52.229592541Z\",\"config\":{\"name\":\"P\",\"deliver_policy\":\"new\",\"ack_policy\":\"none\",\"max_deliver\":-1,\"replay_policy\":\"instant\",\"flow_control\":true,\"deliver_subject\":\"push.hb\",\"idle_heartbeat\":200000000,\"inactive_threshold\":5000000000,\"num_replicas\":0,\"metadata\":{\"_nats.level\":\"5\",\"_nats.req.level\":\"0\",\"_nats.ver\":\"2.15.2\"}},\"delivered\":{\"consumer_seq\":0,\"stream_seq\":2},\"ack_floor\":{\"consumer_seq\":0,\"stream_seq\":2},\"num_ack_pending\":0,\"num_redelivered\":0,\"num_waiting\":0,\"num_pending\":0,\"push_bound\":true,\"ts\":\"2026-11-29T17:40:52.232184834Z\"}\r\nHMSG push.hb 3 75 75\r\nNATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 0\r\nNats-Last-Stream: 2\r\n\r\n\r\nHMSG push.hb 3 75 75\r\nNATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 0\r\nNats-Last-Stream: 2\r\n\r\n\r\nHMSG push.hb 3 75 75\r\nNATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 0\r\nNats-Last-Stream: 2\r\n\r\n\r\n"},
	{"capture-max-payload", "-ERR 'Maximum Payload Violation'\r\n"},
	{"capture-verbose-unknown-op", "+OK\r\n-ERR 'Unknown Protocol Operation'\r\n"},
	{"capture-stale", "PING\r\n-ERR 'Stale Connection'\r\n"},
	{"capture-auth-info", "INFO {\"server_id\":\"NAV7AWSJAU7ZHLZWWZTYNEUREEFGJC2KGBMANLVVEVH2TRINAKDETQ7E\",\"server_name\":\"auth\",\"version\":\"2.15.2\",\"proto\":1,\"go\":\"go1.26.8\",\"host\":\"127.0.0.1\",\"port\":35569,\"headers\":true,\"auth_required\":true,\"max_payload\":1048576,\"client_id\":5,\"client_ip\":\"127.0.0.1\",\"api_lvl\":5,\"xkey\":\"XAF4WGCRTCUY4J246245VT76VND2WCKTSLKT3RQUDOHTHZSIQ6RSZ4LR\"} \r\n"},
	{"capture-auth-violation", "-ERR 'Authorization Violation'\r\n"},
	{"capture-permissions", "-ERR 'Permissions Violation for Publish to \"foo\"'\r\n-ERR 'Permissions Violation for Subscription to \"bar\"'\r\nPONG\r\n"},
	{"capture-info-clustered", "INFO {\"server_id\":\"NCF3FC2RAUZBW3OGISZUOFUSWDWASODAG5ROF7IBAILPMUYYFQVFCUWP\",\"server_name\":\"n1\",\"version\":\"2.15.2\",\"proto\":1,\"go\":\"go1.26.8\",\"host\":\"127.0.0.1\",\"port\":37433,\"headers\":true,\"max_payload\":1048576,\"client_id\":10,\"client_ip\":\"127.0.0.1\",\"cluster\":\"c1\",\"connect_urls\":[\"127.0.0.1:37433\",\"127.0.0.1:41803\"],\"api_lvl\":5,\"xkey\":\"XDILME3FFSLSAFR34AYCYIF4ZTBTSU2EZUCU6W4ONODZTLNXKEVB2QZN\"} \r\n"},

	// Shaped like captures, with the values the brief's examples use.
	{"info-ldm", "INFO {\"server_id\":\"NCF3FC2RAUZBW3OGISZUOFUSWDWASODAG5ROF7IBAILPMUYYFQVFCUWP\",\"server_name\":\"n1\",\"version\":\"2.15.2\",\"proto\":1,\"go\":\"go1.26.8\",\"host\":\"0.0.0.0\",\"port\":4222,\"headers\":true,\"max_payload\":1048576,\"jetstream\":true,\"cluster\":\"c1\",\"connect_urls\":[\"10.0.0.1:4222\",\"10.0.0.2:4222\",\"[fd00::3]:4222\"],\"ldm\":true,\"api_lvl\":5,\"xkey\":\"XBI4LTT4OWHFMX2CJ64PZYAJWBCS76BAQC242YILZ55452XWSMGSFPSJ\"} \r\n"},
	{"js-ack-reply", "MSG ORDERS.new 7 $JS.ACK.ORDERS.C.1.2.3.1700000000000000000.0 24\r\n{\"id\":3,\"item\":\"sprocket\"}\r\n"},
	{"js-ack-reply-domain", "MSG ORDERS.new 7 $JS.ACK.hub.ACC.ORDERS.C.1.2.3.1700000000000000000.0.tok 5\r\nhello\r\n"},
	{"status-503", hmsg("_INBOX.x 2", "NATS/1.0 503\r\n\r\n", "")},
	{"status-100-flow-control", hmsg("push.hb 3 $JS.FC.ORDERS.abc.9", "NATS/1.0 100 FlowControl Request\r\n\r\n", "")},
	{"status-100-heartbeat-stalled", hmsg("push.hb 3", "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 42\r\nNats-Last-Stream: 1042\r\nNats-Consumer-Stalled: $JS.FC.ORDERS.x.1\r\n\r\n", "")},
	{"status-409-variants", hmsg("_INBOX.p 2", "NATS/1.0 409 Exceeded MaxRequestBatch of 1\r\n\r\n", "") +
		hmsg("_INBOX.p 2", "NATS/1.0 409 Leadership Change\r\n\r\n", "")},
	{"hmsg-header-and-payload", hmsg("ORDERS.new 9 _INBOX.r", "NATS/1.0\r\nNats-Msg-Id: 1\r\nNats-TTL: 1m\r\n\r\n", "hello")},
	{"mixed-case-tabs", "msg\tfoo.bar\t22\treply.to   3 \r\nabc\r\nping\npong  \r\n+ok\t\r\n-err\t'x'\r\ninfo\t{}\r\nhmsg a 1 12 12\r\nNATS/1.0\r\n\r\n\r\n"},
	{"ping-pong", "PING\r\nPONG\r\n"},
	{"empty-payloads", "MSG a 1 0\r\n\r\nHMSG a 1 0 0\r\n\r\n-ERR \r\n-ERR ''\r\n"},
	{"size-18-digits", "MSG foo 1 000000000000000003\r\nabc\r\n"},
	{"sid-max", "MSG foo 18446744073709551615 1\r\nx\r\n"},
	// At and one past tinyLimits (16, 16, 32); fuzzLimits (256, 4096, 8192)
	// are reached by bad-control-line and bad-too-large.
	{"at-tiny-limits", "MSG a 1 16\r\n0123456789abcdef\r\nINFO {\"server_id\":\"NABCDEFG\",\"v\":11}\r\nMSG a.b.c.d.e.f 1 0\r\n\r\n"},
	{"over-tiny-payload", "MSG a 1 17\r\n0123456789abcdefg\r\n"},
	{"over-tiny-line", "MSG a.b.c.d.e.fg 1 0\r\n\r\n"},
	{"over-tiny-info", "INFO {\"server_id\":\"NABCDEFGH\",\"v\":11}\r\n"},

	// Malformed.
	{"bad-size-overflow", "MSG foo 1 99999999999999999999\r\n"},
	{"bad-size-19-digits", "MSG foo 1 0000000000000000003\r\nabc\r\n"},
	{"bad-sid-overflow", "MSG foo 18446744073709551616 1\r\nx\r\n"},
	{"bad-size-signed", "MSG foo 1 -3\r\nMSG foo 1 +3\r\n"},
	{"bad-missing-crlf", "MSG foo 1 3\r\nabcXX"},
	{"bad-missing-lf", "MSG foo 1 3\r\nabc\rX"},
	{"bad-lf-only", "MSG foo 1 3\r\nabc\n\n"},
	{"bad-header-size-over-total", "HMSG foo 1 20 10\r\n"},
	{"bad-header-size-small", "HMSG foo 1 5 10\r\n"},
	{"bad-too-large", "MSG foo 1 5000\r\n"},
	{"bad-control-line", "MSG " + strings.Repeat("a.", 150) + "b 1 0\r\n\r\n"},
	{"bad-unknown-op", "ZOO\r\n"},
	{"bad-unknown-suffix", "PINGX\r\n"},
	{"bad-unknown-msgx", "MSGX foo 1 1\r\n"},
	{"bad-leading-space", " PING\r\n"},
	{"bad-ping-arg", "PING X\r\n"},
	{"bad-args-count", "MSG a b c d e f g\r\nMSG foo\r\n"},
	{"bad-no-args", "MSG\r\n"},
	{"bad-empty-info", "INFO \r\n"},
	{"bad-err-no-text", "-ERR\r\n"},
	{"bad-escape", "\x1b[31mZOO\r\n"},
	{"bad-client-op-on-server", "PUB foo 0\r\n\r\n"},

	// What a client sends, for the ClientOps pass.
	{"client-connect", "CONNECT {\"verbose\":false,\"pedantic\":false,\"tls_required\":false,\"name\":\"\",\"lang\":\"go\",\"version\":\"0.1.0\",\"protocol\":1,\"echo\":true,\"headers\":true,\"no_responders\":true}\r\nPING\r\n"},
	{"client-session", "SUB foo 1\r\nSUB _INBOX.abc.* 2\r\nSUB foo.* workers 3\r\nPUB foo 5\r\nhello\r\nPUB foo reply.x 3\r\nabc\r\nHPUB foo 21 26\r\nNATS/1.0\r\nX-Id: 7\r\n\r\nhello\r\nHPUB foo _INBOX.abc.1 12 12\r\nNATS/1.0\r\n\r\n\r\nUNSUB 1\r\nUNSUB 2 10\r\nPONG\r\n"},
	{"client-js-request", "PUB $JS.API.CONSUMER.MSG.NEXT.ORDERS.C _INBOX.abc.9 34\r\n{\"batch\":5,\"expires\":300000000}\r\nPUB $JS.ACK.ORDERS.C.1.2.3.1700000000000000000.0 0\r\n\r\n"},
	{"client-bad", "SUB foo\r\nUNSUB x\r\n"},
}

// hmsg writes an HMSG frame: args are "subject sid [reply]".
func hmsg(args, header, payload string) string {
	return fmt.Sprintf("HMSG %s %d %d\r\n%s%s\r\n", args, len(header), len(header)+len(payload), header, payload)
}

// roundTripSeeds seed FuzzEncodeRoundTrip: subject, reply, queue, header
// key, header values (';'-separated), raw header block (also used as
// CONNECT/INFO JSON), payload, sid, max.
var roundTripSeeds = []seed{
	rt("pub", "foo", "", "", "", "", "", "hello", 1, 0),
	rt("pub-reply", "foo", "reply.x", "", "", "", "", "abc", 1, 0),
	rt("js-publish", "ORDERS.new", "_INBOX.abc.4", "", "Nats-Msg-Id", "1", "", `{"id":1,"item":"widget"}`, 2, 0),
	rt("js-pull-request", "$JS.API.CONSUMER.MSG.NEXT.ORDERS.C", "_INBOX.abc.9", "", "", "", "", `{"batch":5,"expires":300000000}`, 2, 5),
	rt("js-ack", "$JS.ACK.ORDERS.C.1.2.3.1700000000000000000.0", "", "", "", "", "", "+ACK", 7, 0),
	rt("js-expected-seq", "ORDERS.new", "_INBOX.abc.5", "", "Nats-Expected-Last-Sequence", "5", "", "x", 3, 0),
	rt("ttl-header", "KV.bucket.key", "", "", "Nats-TTL", "1m", "", "value", 4, 1),
	rt("multi-value", "foo", "", "", "X-Multi", "a;b; c ;\td\t;", "", "", 5, 0),
	rt("empty-header-value", "foo", "", "", "X-Empty", "", "", "p", 6, 0),
	rt("header-colon-value", "foo", "", "", "X-Url", "nats://h:4222", "", "", 6, 0),
	rt("bad-header-key-space", "foo", "", "", "Bad Key", "v", "", "", 1, 0),
	rt("bad-header-key-colon", "foo", "", "", "Bad:Key", "v", "", "", 1, 0),
	rt("bad-header-value-crlf", "foo", "", "", "K", "v\r\nX-Injected: 1", "", "", 1, 0),
	rt("bad-header-value-nul", "foo", "", "", "K", "nul\x00", "", "", 1, 0),
	rt("sub-wildcards", "foo.*.bar.>", "", "workers", "", "", "", "", 9, 100),
	rt("sub-full-wildcard", ">", "", "", "", "", "", "", 10, 0),
	rt("sub-star-not-last", "*.>", "", "q", "", "", "", "", 11, 0),
	rt("bad-gt-not-last", "foo.>.bar", "", "", "", "", "", "", 12, 0),
	rt("bad-empty-token", "foo..bar", "", "", "", "", "", "", 1, 0),
	rt("bad-leading-dot", ".foo", "reply.", "", "", "", "", "", 1, 0),
	rt("bad-space", "foo bar", "", "q 1", "", "", "", "", 1, 0),
	rt("bad-tab-reply", "foo", "re\tply", "", "", "", "", "", 1, 0),
	rt("bad-empty-subject", "", "", "", "", "", "", "", 0, 0),
	rt("bad-del", "foo\x7f", "", "q\x7f", "", "", "", "", 1, 0),
	rt("utf8", "föö.bär.日本", "_INBOX.ü", "grüppe", "X-Ü", "wert", "", "ü", 1, 0),
	rt("bad-utf8", "foo.\xff", "", "\xc3", "", "", "", "\xff", 1, 0),
	rt("sid-max", "foo", "", "", "", "", "", "", math.MaxUint64, math.MaxUint64),
	rt("raw-status-block", "foo", "", "", "", "", "NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 5\r\nNats-Pending-Bytes: 0\r\n\r\n", "", 2, 0),
	rt("raw-block", "foo", "_INBOX.r", "", "", "", "NATS/1.0\r\nX-Id: 7\r\n\r\n", "hello", 2, 0),
	rt("raw-bad-block", "foo", "", "", "", "", "NATS/1.0\r\nX-Id 7\r\n\r\n", "hello", 2, 0),
	rt("connect-json", "foo", "", "", "", "Permissions Violation for Publish to \"foo\"", `{"verbose":false,"pedantic":false,"lang":"go","version":"0.1.0","protocol":1,"headers":true,"no_responders":true}`, "", 1, 0),
	rt("connect-blank", "foo", "", "", "", "'quoted'", " \t\r", "", 1, 0),
	rt("err-text-quotes", "foo", "", "", "", " 'Stale Connection' ", "", "", 1, 0),
	rt("payload-crlf", "foo", "", "", "", "", "", "MSG foo 1 3\r\nabc\r\nPING\r\n", 1, 0),
}

func rt(name, subject, reply, queue, hkey, hval, raw, payload string, sid, max uint64) seed {
	return seed{name, []any{subject, reply, queue, hkey, hval, []byte(raw), []byte(payload), sid, max}}
}

// receivedHeaderSeeds seed FuzzReceivedHeader: a header block and a key
// to look up.
var receivedHeaderSeeds = []seed{
	rh("empty", "", "X"),
	rh("minimal", "NATS/1.0\r\n\r\n", "X"),
	rh("one-field", "NATS/1.0\r\nX-Id: 7\r\n\r\n", "X-Id"),
	rh("503", "NATS/1.0 503\r\n\r\n", "Nats-Subject"),
	rh("503-subject", "NATS/1.0 503\r\nNats-Subject: nobody.here\r\n\r\n", "Nats-Subject"),
	rh("404", "NATS/1.0 404 No Messages\r\n\r\n", "X"),
	rh("408", "NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 5\r\nNats-Pending-Bytes: 0\r\n\r\n", "Nats-Pending-Messages"),
	rh("409", "NATS/1.0 409 Consumer Deleted\r\n\r\n", "X"),
	rh("100-heartbeat", "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 0\r\nNats-Last-Stream: 2\r\n\r\n", "Nats-Last-Stream"),
	rh("100-flow-control", "NATS/1.0 100 FlowControl Request\r\n\r\n", "X"),
	rh("spaces-before-code", "NATS/1.0   503  No Responders \r\n\r\n", "X"),
	rh("multi-value", "NATS/1.0\r\nX: a\r\nx: b\r\nX:c\r\nX:\t d \t\r\n\r\n", "X"),
	rh("empty-value", "NATS/1.0\r\nX:\r\nY: \r\n\r\n", "Y"),
	rh("colon-in-value", "NATS/1.0\r\nX-Url: nats://h:4222\r\n\r\n", "X-Url"),
	rh("nul-value", "NATS/1.0\r\nX: a\x00b\r\n\r\n", "X"),
	rh("utf8-value", "NATS/1.0\r\nX: grüße\r\n\r\n", "X"),
	rh("cr-in-description", "NATS/1.0 503 a\rb\r\n\r\n", "X"),
	rh("bad-version", "NATS/1.1\r\n\r\n", "X"),
	rh("bad-http", "HTTP/1.1 200 OK\r\n\r\n", "X"),
	rh("bad-no-final-line", "NATS/1.0 503\r\nX: 1\r\n", "X"),
	rh("bad-bare-lf", "NATS/1.0\nX: 1\n\n", "X"),
	rh("bad-lf-in-value", "NATS/1.0\r\nX: 1\nY: 2\r\n\r\n", "Y"),
	rh("bad-cr-in-value", "NATS/1.0\r\nX: 1\rY: 2\r\n\r\n", "X"),
	rh("bad-key-space", "NATS/1.0\r\nX Y: 1\r\n\r\n", "X Y"),
	rh("bad-key-empty", "NATS/1.0\r\n: 1\r\n\r\n", ""),
	rh("bad-no-colon", "NATS/1.0\r\nX-Id 7\r\n\r\n", "X-Id"),
	rh("bad-early-end", "NATS/1.0\r\n\r\nX: 1\r\n\r\n", "X"),
	rh("bad-short-code", "NATS/1.0 50\r\n\r\n", "X"),
	rh("bad-long-code", "NATS/1.0 5034\r\n\r\n", "X"),
	rh("bad-tab-before-code", "NATS/1.0\t503\r\n\r\n", "X"),
	rh("bad-trailing-space", "NATS/1.0 \r\n\r\n", "X"),
}

func rh(name, data, key string) seed { return seed{name, []any{[]byte(data), key}} }

// ackSeeds seed FuzzAckSubject: reply subjects of JetStream deliveries.
var ackSeeds = []seed{
	ack("v1", "$JS.ACK.ORDERS.worker.1.123456.123450.1764440000000000000.4711"),
	ack("v1-small", "$JS.ACK.S.C.1.1.1.0.0"),
	ack("v1-max", "$JS.ACK.S.C.18446744073709551615.18446744073709551615.18446744073709551615.9223372036854775807.18446744073709551615"),
	ack("v1-ts-overflow", "$JS.ACK.S.C.1.2.3.9223372036854775808.0"),
	ack("v1-overflow", "$JS.ACK.S.C.18446744073709551616.1.1.1.1"),
	ack("v1-20-digits", "$JS.ACK.S.C.00000000000000000001.1.1.1.1"),
	ack("v1-leading-zeros", "$JS.ACK.S.C.0001.02.3.4.5"),
	ack("v1-8-digits", "$JS.ACK.S.C.12345678.87654321.1.1.1"),
	ack("v1-9-digits", "$JS.ACK.S.C.123456789.987654321.1.1.1"),
	ack("v1-16-digits", "$JS.ACK.S.C.1234567890123456.1.1.1.1"),
	ack("v1-17-digits", "$JS.ACK.S.C.12345678901234567.1.1.1.1"),
	ack("v1-names", "$JS.ACK.a-b_c.d$e.1.2.3.4.5"),
	ack("v1-empty-stream", "$JS.ACK..C.1.2.3.4.5"),
	ack("v1-empty-consumer", "$JS.ACK.S..1.2.3.4.5"),
	ack("v1-empty-number", "$JS.ACK.S.C.1..3.4.5"),
	ack("v1-sign", "$JS.ACK.S.C.+1.2.3.4.5"),
	ack("v1-colon", "$JS.ACK.S.C.1.2:.3.4.5"),
	ack("v1-slash", "$JS.ACK.S.C.1./2.3.4.5"),
	ack("v1-high-byte", "$JS.ACK.S.C.1.2\xfa.3.4.5"),
	ack("v2", "$JS.ACK.hub.ACCHASH.ORDERS.worker.3.123456789012.123456789.1764440000000000000.0"),
	ack("v2-no-domain", "$JS.ACK._.ACCHASH.S.C.1.2.3.4.5"),
	ack("v2-empty-domain", "$JS.ACK..ACCHASH.S.C.1.2.3.4.5"),
	ack("v2-empty-hash", "$JS.ACK.d..S.C.1.2.3.4.5"),
	ack("v2-extension", "$JS.ACK.d.h.S.C.1.2.3.4.5.rand"),
	ack("v2-empty-extension", "$JS.ACK.d.h.S.C.1.2.3.4.5."),
	ack("ten-tokens", "$JS.ACK.d.S.C.1.2.3.4.5"),
	ack("eight-tokens", "$JS.ACK.S.C.1.2.3.4"),
	ack("not-ack", "$JS.API.S.C.1.2.3.4.5"),
	ack("short", "$JS.ACK."),
	ack("empty", ""),
}

func ack(name, s string) seed { return seed{name, []any{s}} }

// corpusEntry encodes fuzz arguments in the "go test fuzz v1" format.
func corpusEntry(args []any) string {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch v := a.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		case string:
			fmt.Fprintf(&b, "string(%q)\n", v)
		case uint64:
			fmt.Fprintf(&b, "uint64(%d)\n", v)
		case bool:
			fmt.Fprintf(&b, "bool(%v)\n", v)
		default:
			panic(fmt.Sprintf("corpusEntry: unsupported %T", a))
		}
	}
	return b.String()
}

// seedCorpora maps each fuzz target to its seeds.
func seedCorpora() map[string][]seed {
	var ps []seed
	for _, s := range parserSeeds {
		ps = append(ps, seed{s.name, []any{[]byte(s.data)}})
	}
	return map[string][]seed{
		"FuzzParserSplits":       ps,
		"FuzzParserDifferential": ps,
		"FuzzEncodeRoundTrip":    roundTripSeeds,
		"FuzzReceivedHeader":     receivedHeaderSeeds,
		"FuzzAckSubject":         ackSeeds,
		"FuzzDirectGet":          directGetSeeds,
		"FuzzAsyncInfo":          infoSeeds,
		"FuzzStatusReply":        statusSeeds,
	}
}

// TestSeedCorpus checks that testdata/fuzz/<Target>/seed-* are exactly the
// seed lists above; with -update-corpus it rewrites them. Other files in
// those directories (crashers kept as regression tests) are left alone.
func TestSeedCorpus(t *testing.T) {
	for target, seeds := range seedCorpora() {
		if len(seeds) < 25 {
			t.Errorf("%s: only %d seeds", target, len(seeds))
		}
		dir := filepath.Join("testdata", "fuzz", target)
		want := map[string]string{}
		for _, s := range seeds {
			name := "seed-" + s.name
			if _, dup := want[name]; dup {
				t.Fatalf("%s: two seeds named %s", target, name)
			}
			want[name] = corpusEntry(s.args)
		}
		existing, err := filepath.Glob(filepath.Join(dir, "seed-*"))
		if err != nil {
			t.Fatal(err)
		}
		if *updateCorpus {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, path := range existing {
				if _, ok := want[filepath.Base(path)]; !ok {
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
				}
			}
			for name, content := range want {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		for _, path := range existing {
			if _, ok := want[filepath.Base(path)]; !ok {
				t.Errorf("%s is not in the seed list; run go test ./fuzz -run=TestSeedCorpus -update-corpus", path)
			}
		}
		for name, content := range want {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || !bytes.Equal(got, []byte(content)) {
				t.Errorf("%s/%s is missing or stale; run go test ./fuzz -run=TestSeedCorpus -update-corpus", dir, name)
			}
		}
	}
}
