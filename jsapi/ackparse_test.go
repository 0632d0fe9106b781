package jsapi

import "testing"

// BenchmarkParseAckSubject decodes the v1 layout, the 11-token v2 layout
// the server sends with a domain and account hash (both the word-at-a-time
// path), and a v2 subject with an extension token (the general decoder).
func BenchmarkParseAckSubject(b *testing.B) {
	for _, c := range []struct{ name, subj string }{
		{"v1", "$JS.ACK.ORDERS.worker.1.123456.123450.1764440000000000000.4711"},
		{"v2", "$JS.ACK.hub.ACCHASH.ORDERS.worker.1.123456.123450.1764440000000000000.4711"},
		{"v2ext", "$JS.ACK.hub.ACCHASH.ORDERS.worker.1.123456.123450.1764440000000000000.4711.rnd"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseAckSubject(c.subj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestParseAckFastMatchesTokens checks the word-at-a-time decoder against
// the general one on valid subjects (numbers of every length from 1 to 20
// digits, both layouts) and on every single-byte corruption and deletion
// of them.
func TestParseAckFastMatchesTokens(t *testing.T) {
	seeds := []string{
		"$JS.ACK.ORDERS.worker.1.123456.123450.1764440000000000000.4711",
		"$JS.ACK.S.C.1.1.1.0.0",
		"$JS.ACK.S.C.18446744073709551615.2.3.9223372036854775807.0",
		"$JS.ACK.S.C.1.2.3.9223372036854775808.0",
		"$JS.ACK.S.C.0001.02.3.4.5",
		"$JS.ACK.a-b_c.d$e.1.2.3.4.5",
		"$JS.ACK.hub.ACCHASH.ORDERS.worker.3.123456789012.123456789.1764440000000000000.0",
		"$JS.ACK._.ACCHASH.S.C.1.2.3.4.5",
		"$JS.ACK.d.h.S.C.1.2.3.4.5.ext",
		"$JS.ACK..h.S.C.1.2.3.4.5",
		"$JS.ACK.S.C.99999999999999999999.1.1.1.1",
	}
	const digits = "98765432101234567890"
	for n := 1; n <= len(digits); n++ {
		d := digits[:n]
		seeds = append(seeds,
			"$JS.ACK.S.C."+d+".1.1.1.1", "$JS.ACK.S.C.1."+d+".1.1.1",
			"$JS.ACK.S.C.1.1."+d+".1.1", "$JS.ACK.S.C.1.1.1.1."+d,
			"$JS.ACK.S.C.1.1.1."+d+".1", "$JS.ACK.S.C."+d+"."+d+"."+d+".1."+d,
			"$JS.ACK.dom.hash.S.C."+d+"."+d+"."+d+".1."+d)
	}
	// The layouts the server sends take the fast path.
	for _, s := range []string{seeds[0], seeds[1], seeds[6], seeds[7]} {
		var md Metadata
		if !parseAckFast(s, &md) {
			t.Fatalf("%q: not decoded by the fast path", s)
		}
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
		if parseAckFast(s, &got) {
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
