//go:build race

package conn

import (
	"net"
	"strings"
	"testing"

	"github.com/natsio/natsio/proto"
)

// mustPanic runs f and returns the message it panicked with.
func mustPanic(t *testing.T, what string, f func()) string {
	t.Helper()
	var msg string
	func() {
		defer func() {
			r := recover()
			if r == nil {
				t.Fatalf("%s did not panic", what)
			}
			msg, _ = r.(string)
		}()
		f()
	}()
	return msg
}

// In race builds the reader's dispatch methods check that someone holds
// the reader role, and the role moves only as the state table allows.
func TestReaderRoleCheckedInRaceBuilds(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	l := newLink(a)
	nc := &Conn{}
	r := &l.rd

	// Held (the handshake's goroutine role): no panic.
	r.flushStage()
	if !l.roleStep(roleGoroutine, roleFree) {
		t.Fatal("goroutine → free refused")
	}
	op := &proto.Op{Kind: proto.KindPong}
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"fill", func() { _ = r.fill() }},
		{"handleOp", func() { nc.handleOp(r, 0, op) }},
		{"deliver", func() { nc.deliver(r, &proto.Op{Kind: proto.KindMsg}) }},
		{"wakeAll", func() { r.wakeAll() }},
	} {
		if msg := mustPanic(t, c.name+" without the role", c.f); !strings.Contains(msg, "without the reader role") {
			t.Errorf("%s: panic %q", c.name, msg)
		}
	}

	// A move the table does not list panics; listed ones happen.
	if msg := mustPanic(t, "free → yielding", func() { l.roleStep(roleFree, roleYielding) }); !strings.Contains(msg, "moved from free to yielding") {
		t.Errorf("panic %q", msg)
	}
	r2, ok := l.acquire()
	if !ok || r2 != r {
		t.Fatal("acquire of a free role failed")
	}
	if _, ok := l.acquire(); ok {
		t.Fatal("a held role was acquired twice")
	}
	mustPanic(t, "inline → goroutine", func() { l.roleStep(roleInline, roleGoroutine) })
	if !l.roleStep(roleInline, roleInlineWaited) {
		t.Fatal("inline → inline-waited refused")
	}
	if waited := l.release(); !waited {
		t.Fatal("release of an inline-waited role did not report the waiting goroutine")
	}
	if l.role.Load() != roleFree {
		t.Fatalf("role %s after release", roleName(l.role.Load()))
	}
}
