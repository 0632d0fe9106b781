package stamp

import (
	"math/rand/v2"
	"testing"
	"time"
)

// same fails unless Parse and time.Parse agree on s: the same instant, the
// same location, the same error or lack of one.
func same(t *testing.T, s string) {
	t.Helper()
	got, gerr := Parse(s)
	want, werr := time.Parse(time.RFC3339Nano, s)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("%q: error %v, time.Parse %v", s, gerr, werr)
	}
	gn, goff := got.Zone()
	wn, woff := want.Zone()
	// Offset zones are made afresh by each time.Parse: compare them by
	// name and offset; UTC results must be identical values.
	if !got.Equal(want) || gn != wn || goff != woff || (want.Location() == time.UTC && got != want) {
		t.Fatalf("%q: %v (%v), time.Parse %v (%v)", s, got, got.Location(), want, want.Location())
	}
}

func TestParseMatchesTimeParse(t *testing.T) {
	for _, s := range []string{
		"2026-11-30T03:28:55.193118864Z", "2026-11-30T03:28:55Z", "2026-11-30T03:28:55.1Z",
		"2026-11-30T03:28:55.000000000Z", "1970-01-01T00:00:00Z", "1969-12-31T23:59:59.999999999Z",
		"0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "2000-02-29T12:00:00Z",
		"1900-02-29T12:00:00Z", "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
		"2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z",
		"2026-01-01T23:60:00Z", "2026-01-01T23:59:60Z", "2026-11-30T03:28:55.Z", "2026-11-30T03:28:55.1234567890Z",
		"2026-11-30T03:28:55+01:00", "2026-11-30T03:28:55.5-07:30", "2026-11-30 03:28:55Z", "2026-11-30T03:28:55z",
		"2026-11-30T03:28:55.12a4Z", "+026-11-30T03:28:55Z", "2026-1-30T03:28:55Z", "", "Z", "garbage-garbage-garbageZ",
		"2026-11-30T03:28:55,5Z", "2026-11-30T03:28:-5Z",
	} {
		same(t, s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		ts := time.Unix(r.Int64N(253402300800)-62135596800, r.Int64N(1e9)).UTC()
		layout := time.RFC3339Nano
		if r.IntN(4) == 0 {
			layout = time.RFC3339
		}
		same(t, ts.Format(layout))
	}
}

func BenchmarkParse(b *testing.B) {
	const s = "2026-11-30T03:28:55.193118864Z"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTimeParse(b *testing.B) {
	const s = "2026-11-30T03:28:55.193118864Z"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			b.Fatal(err)
		}
	}
}
