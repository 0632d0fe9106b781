package conn_test

import (
	"testing"
	"unsafe"

	"github.com/natsio/natsio/conn"
)

// TestMsgSize: a Msg is allocated for every delivered message (carved from
// arrays of them); its header, a proto.Header, is three words.
func TestMsgSize(t *testing.T) {
	if n := unsafe.Sizeof(conn.Msg{}); n > 88 {
		t.Fatalf("unsafe.Sizeof(conn.Msg{}) = %d, want at most 88", n)
	}
}
