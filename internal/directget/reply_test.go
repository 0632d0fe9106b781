package directget_test

import (
	"testing"

	"github.com/natsio/natsio/internal/directget"
	"github.com/natsio/natsio/jsapi"
)

const (
	ts     = "2026-11-30T16:41:35.147175708Z"
	server = "Nats-Stream: S\r\nNats-Subject: o.1\r\nNats-Sequence: 42\r\nNats-Time-Stamp: " + ts + "\r\n"
	batch  = server + "Nats-Num-Pending: 7\r\nNats-Last-Sequence: 41\r\n"
)

// fields maps a Key to the value expected from Last or InTail; a missing
// Key is expected absent.
type fields map[directget.Key]string

var allKeys = []directget.Key{directget.Stream, directget.Subject, directget.Sequence, directget.TimeStamp,
	directget.NumPending, directget.LastSequence}

// TestParse checks the status, the last field of each server key, the
// final run of server fields and the keys asked for besides.
func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		block  string
		status int
		desc   string
		last   fields
		tail   fields
		also   [2]string // "-" for absent
	}{
		{
			name:  "single reply",
			block: "NATS/1.0\r\n" + server + "\r\n",
			last:  fields{directget.Stream: "S", directget.Subject: "o.1", directget.Sequence: "42", directget.TimeStamp: ts},
			tail:  fields{directget.Stream: "S", directget.Subject: "o.1", directget.Sequence: "42", directget.TimeStamp: ts},
			also:  [2]string{"-", "-"},
		},
		{
			name:  "batch reply with a stored header",
			block: "NATS/1.0\r\nKV-Operation: DEL\r\nX-Own:  a \t\r\nKV-Operation: PURGE\r\n" + batch + "\r\n",
			last: fields{directget.Stream: "S", directget.Subject: "o.1", directget.Sequence: "42", directget.TimeStamp: ts,
				directget.NumPending: "7", directget.LastSequence: "41"},
			tail: fields{directget.Stream: "S", directget.Subject: "o.1", directget.Sequence: "42", directget.TimeStamp: ts,
				directget.NumPending: "7", directget.LastSequence: "41"},
			also: [2]string{"DEL", "a"},
		},
		{
			// Stored fields named like the server's: the last of each key
			// is the server's; the final run starts at the stored
			// Nats-Sequence.
			name:  "stored server keys",
			block: "NATS/1.0\r\nNats-Subject: forged\r\nX-Own: 1\r\nNats-Sequence: nope\r\n" + server + "\r\n",
			last:  fields{directget.Stream: "S", directget.Subject: "o.1", directget.Sequence: "42", directget.TimeStamp: ts},
			tail:  fields{directget.Stream: "S", directget.Subject: "o.1", directget.Sequence: "42", directget.TimeStamp: ts},
			also:  [2]string{"-", "1"},
		},
		{
			// A field of another key after the server's: the final run is
			// empty.
			name:  "server fields not last",
			block: "NATS/1.0\r\n" + server + "X-Own: 1\r\n\r\n",
			last:  fields{directget.Stream: "S", directget.Subject: "o.1", directget.Sequence: "42", directget.TimeStamp: ts},
			tail:  fields{},
			also:  [2]string{"-", "1"},
		},
		{
			name:  "partial run",
			block: "NATS/1.0\r\nNats-Subject: a\r\nX-Own: 1\r\nNats-Sequence: 3\r\n\r\n",
			last:  fields{directget.Subject: "a", directget.Sequence: "3"},
			tail:  fields{directget.Sequence: "3"},
			also:  [2]string{"-", "1"},
		},
		{
			name:   "404",
			block:  "NATS/1.0 404 Message Not Found\r\n\r\n",
			status: 404, desc: "Message Not Found",
			last: fields{}, tail: fields{}, also: [2]string{"-", "-"},
		},
		{
			name:   "408",
			block:  "NATS/1.0 408 Empty Request\r\n\r\n",
			status: 408, desc: "Empty Request",
			last: fields{}, tail: fields{}, also: [2]string{"-", "-"},
		},
		{
			name:   "204 end of batch with fields",
			block:  "NATS/1.0 204 EOB\r\nNats-Num-Pending: 3\r\nNats-Last-Sequence: 9\r\nNats-UpTo-Sequence: 12\r\n\r\n",
			status: 204, desc: "EOB",
			last: fields{directget.NumPending: "3", directget.LastSequence: "9"},
			tail: fields{}, also: [2]string{"-", "-"},
		},
		{
			name:  "empty values",
			block: "NATS/1.0\r\nNats-Subject:\r\nNats-Sequence: \r\n\r\n",
			last:  fields{directget.Subject: "", directget.Sequence: ""},
			tail:  fields{directget.Subject: "", directget.Sequence: ""},
			also:  [2]string{"-", "-"},
		},
		{name: "no block", block: "", last: fields{}, tail: fields{}, also: [2]string{"-", "-"}},
		{name: "no fields", block: "NATS/1.0\r\n\r\n", last: fields{}, tail: fields{}, also: [2]string{"-", "-"}},
		{
			// Bytes no connection delivers: the fields end at the first
			// malformed line.
			name:  "malformed line",
			block: "NATS/1.0\r\nNats-Sequence: 3\r\nbroken\r\nNats-Subject: a\r\n\r\n",
			last:  fields{directget.Sequence: "3"},
			tail:  fields{directget.Sequence: "3"},
			also:  [2]string{"-", "-"},
		},
		{name: "garbage", block: "\x00\xff:\n\r\n:", last: fields{}, tail: fields{}, also: [2]string{"-", "-"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r directget.Reply
			r.Parse([]byte(tt.block), "KV-Operation", "X-Own")
			if r.Status != tt.status || r.Description != tt.desc {
				t.Errorf("status %d %q, want %d %q", r.Status, r.Description, tt.status, tt.desc)
			}
			for _, k := range allKeys {
				check := func(how string, want fields, got func(directget.Key) (string, bool)) {
					t.Helper()
					w, has := want[k]
					if v, ok := got(k); v != w || ok != has {
						t.Errorf("%s(%v) = %q, %v; want %q, %v", how, k, v, ok, w, has)
					}
				}
				check("Last", tt.last, r.Last)
				check("InTail", tt.tail, r.InTail)
			}
			for i, w := range tt.also {
				v, ok := r.Also(i)
				if w == "-" && (ok || v != "") || w != "-" && (!ok || v != w) {
					t.Errorf("Also(%d) = %q, %v; want %q", i, v, ok, w)
				}
			}
		})
	}
}

// TestParseTooManyAlso: more keys than MaxAlso is a programming error.
func TestParseTooManyAlso(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	var r directget.Reply
	r.Parse(nil, "a", "b", "c")
}

// TestKeyNames: the keys are jsapi's header names.
func TestKeyNames(t *testing.T) {
	want := []string{jsapi.HeaderStream, jsapi.HeaderSubject, jsapi.HeaderSequence, jsapi.HeaderTimeStamp,
		jsapi.HeaderNumPending, jsapi.HeaderLastSequence}
	for i, k := range allKeys {
		if k.String() != want[i] {
			t.Errorf("key %d: %q, want %q", i, k, want[i])
		}
	}
	if s := directget.Key(200).String(); s == "" {
		t.Error("no name for an unknown key")
	}
}

// BenchmarkParse reads a kv reply's header as kv's Get does.
func BenchmarkParse(b *testing.B) {
	block := []byte("NATS/1.0\r\nNats-Stream: KV_config\r\nNats-Subject: $KV.config.app.timeout\r\n" +
		"Nats-Sequence: 473\r\nNats-Time-Stamp: 2026-11-30T16:41:35.147175708Z\r\n\r\n")
	b.ReportAllocs()
	for b.Loop() {
		var r directget.Reply
		r.Parse(block, "KV-Operation", "Nats-Marker-Reason")
		if _, ok := r.Last(directget.Sequence); !ok {
			b.Fatal("no sequence")
		}
	}
}
