package proto_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/natsio/natsio/proto"
)

// Map and HeaderOf convert between a Header and nats.go's header shape,
// map[string][]string, both ways, for built and received headers.
func TestHeaderMapRoundTrip(t *testing.T) {
	var h proto.Header
	h.Add("Trace-Id", "4bf92f35")
	h.Add("Tag", "a")
	h.Add("Tag", "b")
	h.Add("tag", "lower") // another key: keys keep their case
	want := map[string][]string{"Trace-Id": {"4bf92f35"}, "Tag": {"a", "b"}, "tag": {"lower"}}
	if got := h.Map(); !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("Map() = %v; want %v", got, want)
	}
	back := proto.HeaderOf(h.Map())
	if got := back.Map(); !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("HeaderOf(Map()).Map() = %v; want %v", got, want)
	}

	// A received header, status line included: the status is not a field.
	block := []byte("NATS/1.0 503 No Responders\r\nTag: a\r\nTag: b\r\n\r\n")
	r := proto.HeaderFromBlock(block)
	got := r.Map()
	copy(block, make([]byte, len(block))) // the map shares no memory with the message
	if !maps.EqualFunc(got, map[string][]string{"Tag": {"a", "b"}}, slices.Equal) {
		t.Fatalf("received Map() = %v", got)
	}

	var nilH *proto.Header
	if m := nilH.Map(); m == nil || len(m) != 0 {
		t.Fatalf("nil header: %v", m)
	}
	if m := (&proto.Header{}).Map(); m == nil || len(m) != 0 {
		t.Fatalf("empty header: %v", m)
	}
}
