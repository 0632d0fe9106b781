package jsapi

import "testing"

func BenchmarkParseAckSubject(b *testing.B) {
	s := "$JS.ACK.ORDERS.worker.1.123456.123450.1764440000000000000.4711"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseAckSubject(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseAckSubjectV2(b *testing.B) {
	s := "$JS.ACK.hub.ACCHASH.ORDERS.worker.1.123456.123450.1764440000000000000.4711.rnd"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseAckSubject(s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestParseAckFastMatchesTokens checks the one-pass v1 decoder against the
// general one on valid subjects and on every single-byte corruption of
// them.
func TestParseAckFastMatchesTokens(t *testing.T) {
	seeds := []string{
		"$JS.ACK.ORDERS.worker.1.123456.123450.1764440000000000000.4711",
		"$JS.ACK.S.C.1.1.1.0.0",
		"$JS.ACK.S.C.18446744073709551615.2.3.9223372036854775807.0",
		"$JS.ACK.S.C.1.2.3.9223372036854775808.0",
		"$JS.ACK.S.C.0001.02.3.4.5",
		"$JS.ACK.a-b_c.d$e.1.2.3.4.5",
	}
	alphabet := []byte{'.', '0', '9', 'a', ' ', 0xff, '$'}
	var cases []string
	for _, s := range seeds {
		cases = append(cases, s)
		for i := range len(s) {
			for _, c := range alphabet {
				b := []byte(s)
				b[i] = c
				cases = append(cases, string(b))
			}
			cases = append(cases, s[:i]+s[i+1:])
		}
	}
	for _, s := range cases {
		want, werr := parseAckTokens(s)
		var got Metadata
		if parseAckV1(s, &got) {
			if werr != nil || got != want {
				t.Fatalf("%q: fast %+v, general %+v %v", s, got, want, werr)
			}
		}
		full, err := ParseAckSubject(s)
		if (err == nil) != (werr == nil) || full != want {
			t.Fatalf("%q: ParseAckSubject %+v %v, general %+v %v", s, full, err, want, werr)
		}
	}
}
