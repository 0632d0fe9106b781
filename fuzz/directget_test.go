package fuzz

import (
	"bytes"
	"slices"
	"testing"

	"github.com/natsio/natsio/internal/directget"
	"github.com/natsio/natsio/internal/fuzzref"
)

// FuzzDirectGet feeds a reply header block (any block the connection would
// deliver: proto.ValidateHeaderBlock accepts it) to internal/directget's
// Reply.Parse and compares it with a reference written from what the
// server sends: its fields come after the stored header, so a stored field
// of the same name is never taken for the server's. The three readers of
// Direct Get replies built on it have targets of the same seeds in their
// own packages: jsapi's FuzzDirectGet, extra's FuzzBatchGet and kv's
// FuzzKVDirect.
func FuzzDirectGet(f *testing.F) {
	f.Fuzz(func(t *testing.T, block, data []byte) {
		block, deliverable := fuzzref.DeliverableBlock(t, block)
		if !deliverable {
			return // the connection delivers no such message
		}
		checkParse(t, block)
	})
}

// checkParse compares directget's Reply.Parse with the reference: the
// status, the last field of each server key, the final run of server keys,
// and the first field of the keys asked for besides; and requires that
// Parse leaves the block as it was.
func checkParse(t *testing.T, block []byte) {
	orig := slices.Clone(block)
	var r directget.Reply
	r.Parse(block, "KV-Operation", "X-Own")
	if !bytes.Equal(block, orig) {
		t.Fatalf("directget: Parse changed block %q to %q", orig, block)
	}
	code, desc := fuzzref.Status(block)
	if r.Status != code || r.Description != desc {
		t.Fatalf("directget: block %q: status %d %q; want %d %q", block, r.Status, r.Description, code, desc)
	}
	fields := fuzzref.Fields(block)
	run := len(fields)
	for run > 0 && slices.Contains(fuzzref.BatchKeys, fields[run-1][0]) {
		run--
	}
	for k := directget.Stream; k <= directget.LastSequence; k++ {
		var want, wantTail string
		i := fuzzref.LastOf(fields, k.String())
		if i >= 0 {
			want = fields[i][1]
		}
		if i >= run {
			wantTail = fields[i][1]
		}
		if v, ok := r.Last(k); v != want || ok != (i >= 0) {
			t.Fatalf("directget: block %q: Last(%v) = %q, %v; want %q, %v", block, k, v, ok, want, i >= 0)
		}
		if v, ok := r.InTail(k); v != wantTail || ok != (i >= run) {
			t.Fatalf("directget: block %q: InTail(%v) = %q, %v; want %q, %v", block, k, v, ok, wantTail, i >= run)
		}
	}
	for n, key := range []string{"KV-Operation", "X-Own"} {
		want, has := "", false
		for _, fl := range fields {
			if fl[0] == key {
				want, has = fl[1], true
				break
			}
		}
		if v, ok := r.Also(n); v != want || ok != has {
			t.Fatalf("directget: block %q: Also(%s) = %q, %v; want %q, %v", block, key, v, ok, want, has)
		}
	}
}
