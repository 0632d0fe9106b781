package fuzz

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
)

// FuzzAckSubject compares jsapi.ParseAckSubject (a word-at-a-time decoder
// for the layouts servers send, the general one for the rest) with refAck,
// written from its documentation with strings.Split and strconv.
func FuzzAckSubject(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		got, err := jsapi.ParseAckSubject(s)
		want, ok := refAck(s)
		if err != nil && !errors.Is(err, jsapi.ErrBadAckSubject) {
			t.Fatalf("%q: error %v, not ErrBadAckSubject", s, err)
		}
		if (err == nil) != ok {
			t.Fatalf("%q: ParseAckSubject %+v, %v; reference valid=%v", s, got, err, ok)
		}
		if ok && got != want {
			t.Fatalf("%q: ParseAckSubject %+v, reference %+v", s, got, want)
		}
	})
}

// refAck decodes a $JS.ACK subject: 9 tokens (v1) or at least 11 (v2, the
// domain "_" meaning none, tokens past the 11th ignored but not empty),
// "$JS" and "ACK" first, stream and consumer not empty, five unsigned
// decimal numbers of at most 20 digits, the time stamp at most the largest
// int64.
func refAck(s string) (jsapi.Metadata, bool) {
	var md jsapi.Metadata
	tok := strings.Split(s, ".")
	var t []string
	switch n := len(tok); {
	case n == 9:
		t = tok[2:]
	case n >= 11:
		for _, x := range tok[11:] {
			if x == "" {
				return md, false
			}
		}
		if tok[2] != "_" {
			md.Domain = tok[2]
		}
		t = tok[4:11]
	default:
		return md, false
	}
	if tok[0] != "$JS" || tok[1] != "ACK" || t[0] == "" || t[1] == "" {
		return jsapi.Metadata{}, false
	}
	var nums [5]uint64
	for i := range nums {
		v, err := strconv.ParseUint(t[2+i], 10, 64)
		if err != nil || len(t[2+i]) > 20 {
			return jsapi.Metadata{}, false
		}
		nums[i] = v
	}
	if nums[3] > 1<<63-1 {
		return jsapi.Metadata{}, false
	}
	md.Stream, md.Consumer = t[0], t[1]
	md.NumDelivered, md.StreamSeq, md.ConsumerSeq = nums[0], nums[1], nums[2]
	md.Timestamp = time.Unix(0, int64(nums[3]))
	md.NumPending = nums[4]
	return md, true
}
