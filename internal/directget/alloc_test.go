//go:build !race

package directget_test

import (
	"testing"

	"github.com/natsio/natsio/internal/directget"
)

// The race detector's instrumentation allocates, hence the build tag.

// TestAllocs: Parse allocates nothing, nor do Single and Batch on the
// replies a server sends, stored header or not: the stored header is cut
// in place.
func TestAllocs(t *testing.T) {
	for _, tt := range []struct {
		name  string
		block string
	}{
		{"Single", "NATS/1.0\r\n" + server + "\r\n"},
		{"Single", "NATS/1.0\r\nKV-Operation: DEL\r\nX-Own: 1\r\n" + server + "\r\n"},
		{"Batch", "NATS/1.0\r\n" + batch + "\r\n"},
		{"Batch", "NATS/1.0\r\nKV-Operation: DEL\r\nX-Own: 1\r\n" + batch + "\r\n"},
	} {
		orig := []byte(tt.block)
		b := make([]byte, len(orig))
		n := testing.AllocsPerRun(100, func() {
			copy(b, orig) // the read cuts the block
			var r directget.Reply
			r.Parse(b, "KV-Operation", "X-Own")
			var m directget.Msg
			var err error
			if tt.name == "Single" {
				m, err = r.Single()
			} else {
				m, err = r.Batch()
			}
			if err != nil || m.Sequence != 42 || m.Subject != "o.1" {
				t.Fatalf("%s %q: %+v, %v", tt.name, tt.block, m, err)
			}
		})
		if n != 0 {
			t.Errorf("%s %q: %v allocs, want 0", tt.name, tt.block, n)
		}
	}
}
