package fuzz

// directGetSeeds seed FuzzDirectGet: Direct Get replies as nats-server
// 2.15 sends them (single and batch), statuses, and stored headers that
// carry fields named as the server's.
var directGetSeeds = []seed{
	dg("plain", "NATS/1.0\r\nNats-Stream: S\r\nNats-Subject: s.a\r\nNats-Sequence: 7\r\nNats-Time-Stamp: 2026-11-30T16:41:35.147175708Z\r\n\r\n", "data"),
	dg("stored-header", "NATS/1.0\r\nX-A: 1\r\nX-A: 2\r\nNats-Stream: S\r\nNats-Subject: s.a\r\nNats-Sequence: 7\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\n\r\n", "d"),
	dg("kv-del", "NATS/1.0\r\nKV-Operation: DEL\r\nNats-Stream: KV_b\r\nNats-Subject: $KV.b.k\r\nNats-Sequence: 9\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\n\r\n", ""),
	dg("kv-purge", "NATS/1.0\r\nKV-Operation: PURGE\r\nNats-Rollup: sub\r\nNats-Stream: KV_b\r\nNats-Subject: $KV.b.k\r\nNats-Sequence: 10\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\n\r\n", ""),
	dg("kv-unknown-op", "NATS/1.0\r\nKV-Operation: NOPE\r\nNats-Stream: KV_b\r\nNats-Subject: $KV.b.k\r\nNats-Sequence: 11\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\n\r\n", "x"),
	dg("marker-maxage", "NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: 1s\r\nNats-Stream: KV_b\r\nNats-Subject: $KV.b.k\r\nNats-Sequence: 12\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\n\r\n", ""),
	dg("marker-remove", "NATS/1.0\r\nNats-Marker-Reason: Remove\r\nNats-Stream: KV_b\r\nNats-Subject: $KV.b.k\r\nNats-Sequence: 13\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\n\r\n", ""),
	dg("spoofed-fields", "NATS/1.0\r\nNats-Subject: $KV.b.victim\r\nNats-Sequence: 999\r\nNats-Time-Stamp: 2001-01-01T00:00:00Z\r\nNats-Stream: KV_b\r\nNats-Subject: $KV.b.evil\r\nNats-Sequence: 3\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\n\r\n", "evil"),
	dg("spoofed-bad-values", "NATS/1.0\r\nNats-Sequence: nope\r\nNats-Time-Stamp: never\r\nX: 1\r\nNats-Stream: S\r\nNats-Subject: s.a\r\nNats-Sequence: 2\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\n\r\n", ""),
	dg("batch", "NATS/1.0\r\nNats-Stream: S\r\nNats-Subject: s.a\r\nNats-Sequence: 7\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\nNats-Num-Pending: 3\r\nNats-Last-Sequence: 6\r\n\r\n", "d"),
	dg("batch-stored-pending", "NATS/1.0\r\nNats-Num-Pending: x\r\nNats-Last-Sequence: y\r\nA: b\r\nNats-Stream: S\r\nNats-Subject: s.a\r\nNats-Sequence: 7\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\nNats-Num-Pending: 0\r\nNats-Last-Sequence: 6\r\n\r\n", ""),
	dg("batch-bad-pending", "NATS/1.0\r\nNats-Stream: S\r\nNats-Subject: s.a\r\nNats-Sequence: 7\r\nNats-Num-Pending: -1\r\n\r\n", ""),
	dg("no-subject", "NATS/1.0\r\nNats-Stream: S\r\nNats-Sequence: 7\r\nNats-Time-Stamp: 2026-11-30T16:41:35Z\r\n\r\n", ""),
	dg("empty-subject", "NATS/1.0\r\nNats-Stream: S\r\nNats-Subject: \r\nNats-Sequence: 7\r\n\r\n", ""),
	dg("no-sequence", "NATS/1.0\r\nNats-Stream: S\r\nNats-Subject: s.a\r\n\r\n", ""),
	dg("bad-sequence", "NATS/1.0\r\nNats-Subject: s.a\r\nNats-Sequence: 1x\r\n\r\n", ""),
	dg("sequence-21-digits", "NATS/1.0\r\nNats-Subject: s.a\r\nNats-Sequence: 000000000000000000001\r\n\r\n", ""),
	dg("sequence-max", "NATS/1.0\r\nNats-Subject: s.a\r\nNats-Sequence: 18446744073709551615\r\n\r\n", ""),
	dg("sequence-overflow", "NATS/1.0\r\nNats-Subject: s.a\r\nNats-Sequence: 18446744073709551616\r\n\r\n", ""),
	dg("bad-stamp", "NATS/1.0\r\nNats-Subject: s.a\r\nNats-Sequence: 1\r\nNats-Time-Stamp: 2026-13-40T99:00:00Z\r\n\r\n", ""),
	dg("no-stamp", "NATS/1.0\r\nNats-Stream: S\r\nNats-Subject: s.a\r\nNats-Sequence: 1\r\n\r\n", "d"),
	dg("blanks", "NATS/1.0\r\nNats-Subject:  \ts.a\t \r\nNats-Sequence:\t5 \r\n\r\n", ""),
	dg("server-fields-first", "NATS/1.0\r\nNats-Stream: S\r\nNats-Subject: s.a\r\nNats-Sequence: 7\r\nX-After: 1\r\n\r\n", ""),
	dg("status-404", "NATS/1.0 404 Message Not Found\r\n\r\n", ""),
	dg("status-408", "NATS/1.0 408 Bad Request\r\n\r\n", ""),
	dg("status-204-eob", "NATS/1.0 204 EOB\r\nNats-Num-Pending: 0\r\nNats-Last-Sequence: 9\r\n\r\n", ""),
	dg("status-with-fields", "NATS/1.0 503\r\nNats-Subject: s.a\r\nNats-Sequence: 1\r\n\r\n", ""),
	dg("empty-block", "NATS/1.0\r\n\r\n", "d"),
	dg("no-header", "", "payload"),
}

func dg(name, block, data string) seed { return seed{name, []any{[]byte(block), []byte(data)}} }
