package pull

import (
	"testing"

	"github.com/natsio/natsio/jsapi"
)

// readMode's policy: lazy acknowledgements only when the loop reads inline
// and MaxAckPending is at least twice MaxMessages (or unlimited); a
// consumer without acks reads inline unless asked to read ahead.
func TestReadMode(t *testing.T) {
	cases := []struct {
		ack          jsapi.AckPolicy
		map_, maxMsg int
		readAhead    int
		inline, lazy bool
	}{
		{jsapi.AckNone, 0, 500, 0, true, false},
		{jsapi.AckNone, 0, 500, 1, false, false},
		{jsapi.AckNone, 0, 500, -1, true, false},
		{jsapi.AckExplicit, 1000, 500, 0, true, true},
		{jsapi.AckExplicit, 999, 500, 0, false, false},
		{jsapi.AckExplicit, -1, 500, 0, true, true},
		{jsapi.AckExplicit, 0, 500, 0, false, false}, // unknown: not safe
		{jsapi.AckAll, 1000, 500, 1, false, false},
		{jsapi.AckExplicit, 1000, 500, -1, true, true},
		{jsapi.AckExplicit, 60, 50, -1, true, false},
		{jsapi.AckExplicit, 1000, 1_000_000, 0, false, false}, // MaxBytes loops
	}
	for _, c := range cases {
		cfg := &jsapi.ConsumerConfig{AckPolicy: c.ack, MaxAckPending: c.map_}
		inline, lazy := readMode(cfg, settings{maxMsgs: c.maxMsg, readAhead: c.readAhead})
		if inline != c.inline || lazy != c.lazy {
			t.Errorf("%s, max ack pending %d, max messages %d, read ahead %d: inline %v lazy %v, want %v %v",
				c.ack, c.map_, c.maxMsg, c.readAhead, inline, lazy, c.inline, c.lazy)
		}
	}
}
