//go:build linux && !race

package conn

import "testing"

// Reads and writes through the raw path allocate nothing.
func TestFastTCPAllocs(t *testing.T) {
	f, srv := tcpPair(t)
	msg := []byte("PING\r\n")
	buf := make([]byte, 64)
	echo := make([]byte, 64)
	n := testing.AllocsPerRun(200, func() {
		if _, err := f.Write(msg); err != nil {
			t.Fatal(err)
		}
		k, err := srv.Read(echo)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Write(echo[:k]); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Read(buf); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per write+read", n)
	}
}
