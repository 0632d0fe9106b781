package conn_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// Trace bounds of one call (conn/trace.go).
const (
	refTraceMaxBytes   = 8 << 20
	refTraceMaxObjects = 64 << 10
)

// FuzzTraceReport decodes a message tracing report as Trace does
// (conn.DecodeTrace): body with Content-Encoding enc, compressed by the
// harness first when compress is set (so that the fuzzer explores the JSON
// inside), taken as is otherwise (corrupt compressed data). The result
// must match refTrace: the same event, or ErrBadTrace for an unknown
// encoding, a stream that does not decompress, more than 8 MiB once
// decompressed, more than 65536 JSON objects, or JSON that does not
// decode.
func FuzzTraceReport(f *testing.F) {
	zw := gzip.NewWriter(nil) // reused: a new one costs more than a decode
	f.Fuzz(func(t *testing.T, enc string, compress bool, body []byte) {
		data := body
		if compress {
			switch strings.ToLower(enc) {
			case "gzip":
				var b bytes.Buffer
				zw.Reset(&b)
				_, _ = zw.Write(body)
				_ = zw.Close()
				data = b.Bytes()
			case "snappy", "s2":
				data = s2.EncodeSnappy(nil, body)
			}
		}
		var h proto.Header
		if enc != "" {
			h.Set("Content-Encoding", enc)
		}
		got, err := conn.DecodeTrace(&conn.Msg{Header: h, Data: data})
		want, ok := refTrace(enc, data)
		if err != nil && !errors.Is(err, conn.ErrBadTrace) {
			t.Fatalf("enc %q: error %v does not match ErrBadTrace", enc, err)
		}
		if (err == nil) != ok {
			t.Fatalf("enc %q, %d bytes: DecodeTrace %v, reference valid=%v", enc, len(data), err, ok)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("enc %q: DecodeTrace %+v, reference %+v", enc, got, want)
		}
	})
}

// refTrace decodes a report: identity or empty encoding, gzip, snappy or
// s2 (in any letter case), within the bounds.
func refTrace(enc string, data []byte) (*conn.TraceEvent, bool) {
	var r io.Reader
	switch strings.ToLower(enc) {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, false
		}
		r = zr
	case "snappy", "s2":
		r = s2.NewReader(bytes.NewReader(data))
	default:
		return nil, false
	}
	if r != nil {
		b, err := io.ReadAll(io.LimitReader(r, refTraceMaxBytes+1))
		if err != nil {
			return nil, false
		}
		data = b
	}
	if len(data) > refTraceMaxBytes || bytes.Count(data, []byte("{")) > refTraceMaxObjects {
		return nil, false
	}
	ev := new(conn.TraceEvent)
	if json.Unmarshal(data, ev) != nil {
		return nil, false
	}
	return ev, true
}
