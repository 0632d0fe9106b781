//go:build !race

package stamp

import "testing"

func TestParseAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _, _ = Parse("2026-11-30T03:28:55.193118864Z") }); n != 0 {
		t.Fatalf("Parse: %v allocs, want 0", n)
	}
}
