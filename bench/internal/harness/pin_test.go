package harness

import (
	"slices"
	"testing"
)

func TestCPUList(t *testing.T) {
	for _, c := range []struct {
		in   string
		cpus CPUs
		out  string
	}{
		{"0", CPUs{0}, "0"},
		{"0-1", CPUs{0, 1}, "0-1"},
		{"0-2,5", CPUs{0, 1, 2, 5}, "0-2,5"},
		{"3,1,2,7-8\n", CPUs{1, 2, 3, 7, 8}, "1-3,7-8"},
		{"", nil, ""},
	} {
		got, err := ParseCPUs(c.in)
		if err != nil || !slices.Equal(got, c.cpus) {
			t.Errorf("ParseCPUs(%q) = %v, %v; want %v", c.in, got, err, c.cpus)
		}
		if s := got.String(); s != c.out {
			t.Errorf("%v.String() = %q, want %q", got, s, c.out)
		}
	}
	for _, bad := range []string{"x", "2-1", "-1", "1-x"} {
		if _, err := ParseCPUs(bad); err == nil {
			t.Errorf("ParseCPUs(%q) accepted", bad)
		}
	}
}

func TestSplitCPUs(t *testing.T) {
	srv, cli, err := SplitCPUs(CPUs{0, 1})
	if err != nil || !slices.Equal(srv, CPUs{1}) || !slices.Equal(cli, CPUs{0}) {
		t.Errorf("SplitCPUs(0-1) = %v, %v, %v; want server 1, clients 0", srv, cli, err)
	}
	srv, cli, err = SplitCPUs(CPUs{2, 3, 4, 6})
	if err != nil || !slices.Equal(srv, CPUs{6}) || !slices.Equal(cli, CPUs{2, 3, 4}) {
		t.Errorf("SplitCPUs(2-4,6) = %v, %v, %v; want server 6, clients 2-4", srv, cli, err)
	}
	if _, _, err := SplitCPUs(CPUs{0}); err == nil {
		t.Error("SplitCPUs accepted one CPU")
	}
}
