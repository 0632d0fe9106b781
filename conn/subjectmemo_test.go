package conn

import (
	"strings"
	"testing"
	"unsafe"
)

// The memo answers for the bytes it accepted last, never for memory.
func TestSubjectMemo(t *testing.T) {
	var m subjectMemo
	if m.Check("") == nil || m.Check("a..b") == nil {
		t.Fatal("invalid subjects accepted")
	}
	s := "orders.created"
	// Checked, then answered from the memo.
	for i := range 2 {
		if m.Check(s) != nil {
			t.Fatalf("valid subject rejected (call %d)", i+1)
		}
	}
	// The same bytes in other memory are checked again, and a bad subject
	// after a good one is still refused.
	if m.Check(strings.Clone(s)) != nil || m.Check("orders created") == nil || m.Check(s[:7]) == nil {
		t.Fatal("memo answered for another string")
	}
	// A view of memory written again (a reused read buffer): other bytes
	// at the same address and of the same length are checked afresh.
	buf := []byte("zz.abcd")
	view := unsafe.String(&buf[0], len(buf))
	if m.Check(view) != nil {
		t.Fatal("valid subject rejected")
	}
	for _, bad := range []string{"zz.\x1b[2J", "zz.a\x01b>", "zz.a b.", "zz.ab.>"} {
		copy(buf, bad)
		if m.Check(view) == nil {
			t.Fatalf("%q accepted: the memo matched memory, not bytes", bad)
		}
	}
	copy(buf, "zz.abcd")
	if m.Check(view) != nil {
		t.Fatal("valid subject rejected after invalid ones")
	}
}
