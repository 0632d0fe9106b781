package jsapi_test

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/jsapi"
)

// ackCase is one $JS.ACK subject and the metadata it must decode to; a nil
// want means the subject must be rejected with ErrBadAckSubject.
type ackCase struct {
	name string
	subj string
	want *jsapi.Metadata
}

// ackMD returns the metadata of the numbered fields 1..5 used by the
// table below, with the given domain, stream and consumer.
func ackMD(domain, stream, consumer string) *jsapi.Metadata {
	return &jsapi.Metadata{Domain: domain, Stream: stream, Consumer: consumer,
		NumDelivered: 1, StreamSeq: 2, ConsumerSeq: 3, NumPending: 5}
}

// The v2 ack subject has 11 tokens or more: the server subscribes to
// "$JS.ACK.<domain>.<hash>.<stream>.<consumer>.*.*.*.*.>" and reserves the
// tokens after the 11th for extensions, so any count ≥ 11 decodes the
// same fields and ignores the rest; 9 tokens is v1; 10, fewer than 9, or
// an empty extra token is rejected.
func TestParseAckSubjectTokenCounts(t *testing.T) {
	cases := []ackCase{
		{"v1 9", "$JS.ACK.S.c.1.2.3.4.5", ackMD("", "S", "c")},
		{"v2 11", "$JS.ACK.hub.HASH.S.c.1.2.3.4.5", ackMD("hub", "S", "c")},
		{"v2 11 no domain", "$JS.ACK._.HASH.S.c.1.2.3.4.5", ackMD("", "S", "c")},
		{"v2 12", "$JS.ACK.hub.HASH.S.c.1.2.3.4.5.rnd", ackMD("hub", "S", "c")},
		{"v2 13", "$JS.ACK.hub.HASH.S.c.1.2.3.4.5.6.7", ackMD("hub", "S", "c")},
		{"v2 14", "$JS.ACK.hub.HASH.S.c.1.2.3.4.5.x.99999999999999999999.-", ackMD("hub", "S", "c")},
		{"v2 30", "$JS.ACK._.HASH.S.c.1.2.3.4.5.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t", ackMD("", "S", "c")},
		{"8", "$JS.ACK.S.c.1.2.3.4", nil},
		{"10", "$JS.ACK.S.c.1.2.3.4.5.6", nil},
		{"10 v2 prefix", "$JS.ACK.hub.HASH.S.c.1.2.3.4", nil},
		{"v2 bad number", "$JS.ACK.hub.HASH.S.c.1.2.x.4.5.6", nil},
		{"v2 empty consumer", "$JS.ACK.hub.HASH.S..1.2.3.4.5.6", nil},
		{"v2 trailing dot", "$JS.ACK.hub.HASH.S.c.1.2.3.4.5.", nil},
		{"v2 empty extra token", "$JS.ACK.hub.HASH.S.c.1.2.3.4.5..x", nil},
		{"v2 extra ends in dot", "$JS.ACK.hub.HASH.S.c.1.2.3.4.5.x.", nil},
		{"v2 extra inner empty", "$JS.ACK.hub.HASH.S.c.1.2.3.4.5.x..y", nil},
		{"not ACK", "$JS.NAK.hub.HASH.S.c.1.2.3.4.5.6", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			md, err := jsapi.ParseAckSubject(c.subj)
			if c.want == nil {
				if !errors.Is(err, jsapi.ErrBadAckSubject) {
					t.Fatalf("%q: %+v, %v; want ErrBadAckSubject", c.subj, md, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", c.subj, err)
			}
			// The time stamp is field 4 (4 ns after the epoch).
			if md.Timestamp.UnixNano() != 4 {
				t.Errorf("%q: time stamp %v", c.subj, md.Timestamp)
			}
			md.Timestamp = c.want.Timestamp
			if md != *c.want {
				t.Errorf("%q:\n got %+v\nwant %+v", c.subj, md, *c.want)
			}
		})
	}
}

// Decoding a v2 subject with extension tokens allocates nothing, as v1
// and plain v2 do.
func TestParseAckSubjectLongAllocs(t *testing.T) {
	for _, s := range []string{
		"$JS.ACK.S.c.1.2.3.4.5",
		"$JS.ACK.hub.HASH.S.c.1.2.3.4.5",
		"$JS.ACK.hub.HASH.S.c.1.2.3.4.5.x.y.z",
	} {
		n := testing.AllocsPerRun(100, func() {
			if _, err := jsapi.ParseAckSubject(s); err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Errorf("%q: %v allocs, want 0", s, n)
		}
	}
}
