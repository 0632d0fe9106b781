package conn

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/natsio/natsio/proto"
)

// TestDecodeTraceBoundsDecompression: a compressed report is read up to
// the per-call bound (8 MiB), so a small gzip body that expands beyond it (a report no
// server writes) is ErrBadTrace instead of unbounded memory; a normal one
// decodes.
func TestDecodeTraceBoundsDecompression(t *testing.T) {
	gz := func(s string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(s))
		zw.Close()
		return b.Bytes()
	}
	hdr := proto.HeaderFromBlock([]byte("NATS/1.0\r\nContent-Encoding: gzip\r\n\r\n"))
	ok := &Msg{Header: hdr, Data: gz(`{"server":{"name":"n1"},"events":[{"type":"in","subj":"a"}]}`)}
	if ev, err := decodeTrace(ok); err != nil || ev.Server.Name != "n1" || ev.Ingress() == nil {
		t.Fatalf("normal report: %+v %v", ev, err)
	}
	// Valid JSON, but 17 MiB once expanded: only the bound can refuse it.
	huge := &Msg{Header: hdr, Data: gz(`{"server":{"name":"` + strings.Repeat("a", 17<<20) + `"}}`)}
	if len(huge.Data) > 1<<20 {
		t.Fatalf("test body not compressed: %d bytes", len(huge.Data))
	}
	if _, err := decodeTrace(huge); !errors.Is(err, ErrBadTrace) {
		t.Fatalf("17 MiB report: %v, want ErrBadTrace", err)
	}
}
