package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/natsio/natsio/natstest"
)

func TestRunCountsEveryMessage(t *testing.T) {
	srv := natstest.NewServer(t)
	var out bytes.Buffer
	if err := run(&out, srv.URL(), "rawceiling.test", 16, 5000, 100, 2); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d result lines, want 2: %q", len(lines), out.String())
	}
	for _, l := range lines {
		var r result
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.N != 5000 || r.Size != 16 || r.WallNs <= 0 {
			t.Fatalf("result %q: %+v, %v", l, r, err)
		}
	}
}

func TestReadMsgsChecksFrames(t *testing.T) {
	for _, tc := range []struct {
		stream        string
		count, bad    int64
		wantErrSubstr string
	}{
		{"MSG s 1 2\r\nab\r\nPING\r\nMSG s 1 3\r\nabc\r\n", 2, 1, "EOF"},
		{"MSG s 1 2\r\nabXY", 0, 0, "CRLF"},
		{"MSG s 1 x\r\nab\r\n", 0, 0, "bad MSG"},
		{"HMSG s 1 2 2\r\nab\r\n", 0, 0, "unexpected"},
	} {
		client, server := net.Pipe()
		go func() {
			_, _ = server.Write([]byte(tc.stream))
			if strings.Contains(tc.stream, "PING") {
				pong := make([]byte, 6)
				if _, err := io.ReadFull(server, pong); err != nil || string(pong) != "PONG\r\n" {
					t.Errorf("answer to PING: %q, %v", pong, err)
				}
			}
			server.Close()
		}()
		var count, bad, want atomic.Int64
		want.Store(1 << 40)
		err := readMsgs(client, 2, &count, &bad, &want, make(chan struct{}, 1))
		if err == nil || !strings.Contains(err.Error(), tc.wantErrSubstr) {
			t.Errorf("%q: error %v, want one containing %q", tc.stream, err, tc.wantErrSubstr)
		}
		if count.Load() != tc.count || bad.Load() != tc.bad {
			t.Errorf("%q: counted %d, %d bad; want %d, %d", tc.stream, count.Load(), bad.Load(), tc.count, tc.bad)
		}
		client.Close()
	}
}
