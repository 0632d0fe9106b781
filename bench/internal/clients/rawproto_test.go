package clients

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestAppendPub(t *testing.T) {
	for _, tc := range []struct {
		subject, reply string
		payload        string
		want           string
	}{
		{"foo", "", "hello", "PUB foo 5\r\nhello\r\n"},
		{"foo.bar", "_INBOX.x", "hi", "PUB foo.bar _INBOX.x 2\r\nhi\r\n"},
		{"e", "", "", "PUB e 0\r\n\r\n"},
	} {
		if got := string(AppendPub(nil, tc.subject, tc.reply, []byte(tc.payload))); got != tc.want {
			t.Errorf("AppendPub(%q, %q, %q) = %q, want %q", tc.subject, tc.reply, tc.payload, got, tc.want)
		}
		// The []byte subject form encodes the same frame.
		if got := string(AppendPub([]byte("X"), []byte(tc.subject), tc.reply, []byte(tc.payload))); got != "X"+tc.want {
			t.Errorf("AppendPub([]byte) = %q", got)
		}
	}
	if got := string(AppendSub(nil, "a.*", 7)); got != "SUB a.* 7\r\n" {
		t.Errorf("AppendSub = %q", got)
	}
}

func TestPubBatch(t *testing.T) {
	payload := Payload(16)
	batch, frameLen, k := PubBatch("bench.pub.16", payload, 64<<10)
	frame := AppendPub(nil, "bench.pub.16", "", payload)
	if frameLen != len(frame) {
		t.Fatalf("frameLen %d, want %d", frameLen, len(frame))
	}
	if len(batch) != k*frameLen || len(batch) < 64<<10 || len(batch)-frameLen >= 64<<10 {
		t.Fatalf("batch of %d bytes, k %d, frame %d: not the smallest batch of at least 64 KiB", len(batch), k, frameLen)
	}
	if !bytes.Equal(batch, bytes.Repeat(frame, k)) {
		t.Fatal("batch is not k copies of the frame")
	}
	// A frame larger than the minimum: one copy.
	if _, _, k := PubBatch("s", Payload(100), 10); k != 1 {
		t.Fatalf("k = %d, want 1", k)
	}
}

func TestReaderFrames(t *testing.T) {
	stream := "INFO {\"server_id\":\"x\"}\r\n" +
		"+OK\r\n" +
		"MSG foo 1 5\r\nhello\r\n" +
		"PING\r\n" +
		"MSG foo.bar 22 _INBOX.abc.7 3\r\nxyz\r\n" +
		"HMSG _INBOX.r 2 16 16\r\nNATS/1.0 503\r\n\r\n\r\n" +
		"MSG big 3 70000\r\n" + strings.Repeat("p", 70000) + "\r\n" +
		"PONG\r\n" +
		"-ERR 'Unknown Protocol Operation'\r\n"
	type want struct {
		kind  OpKind
		sid   uint64
		reply string
		size  int
		text  string
	}
	wants := []want{
		{kind: OpInfo, text: `{"server_id":"x"}`},
		{kind: OpOK},
		{kind: OpMsg, sid: 1, size: 5},
		{kind: OpPing},
		{kind: OpMsg, sid: 22, reply: "_INBOX.abc.7", size: 3},
		{kind: OpHMsg, sid: 2, size: 16},
		{kind: OpMsg, sid: 3, size: 70000},
		{kind: OpPong},
		{kind: OpErr, text: "'Unknown Protocol Operation'"},
	}
	readers := map[string]func() io.Reader{
		"whole":   func() io.Reader { return strings.NewReader(stream) },
		"onebyte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(stream)) },
		"half":    func() io.Reader { return iotest.HalfReader(strings.NewReader(stream)) },
	}
	for name, mk := range readers {
		t.Run(name, func(t *testing.T) {
			// A buffer smaller than the big payload exercises the
			// Discard-only path.
			r := NewReader(mk(), 64<<10)
			var reply []byte
			for i, w := range wants {
				op, err := r.Next(reply)
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if op.Kind != w.kind || op.SID != w.sid || string(op.Reply) != w.reply || op.Size != w.size || string(op.Text) != w.text {
					t.Fatalf("frame %d: got kind %d sid %d reply %q size %d text %q, want %+v", i, op.Kind, op.SID, op.Reply, op.Size, op.Text, w)
				}
				reply = op.Reply
			}
			if _, err := r.Next(nil); !errors.Is(err, io.EOF) {
				t.Fatalf("after the last frame: %v, want EOF", err)
			}
		})
	}
}

func TestReaderErrors(t *testing.T) {
	for _, bad := range []string{
		"MSG foo 1 5\r\nhelloXX",           // payload not followed by CRLF
		"MSG foo 5\r\n",                    // too few arguments
		"MSG foo 1 2 3 4\r\n",              // too many arguments
		"MSG foo 1 x5\r\nhello\r\n",        // bad size
		"WHAT\r\n",                         // unknown operation
		"HMSG foo 1 5\r\nNATS/1.0\r\n\r\n", // HMSG without total size
	} {
		r := NewReader(strings.NewReader(bad), 4096)
		if _, err := r.Next(nil); err == nil {
			t.Errorf("Next(%q) succeeded", bad)
		}
	}
}

func TestCounter(t *testing.T) {
	c := newCounter(4)
	target := c.expect(3)
	for range 3 {
		c.add(4)
	}
	if err := c.wait(target, func() int64 { return 0 }); err != nil {
		t.Fatal(err)
	}
	if err := c.checkExact(target); err != nil {
		t.Fatal(err)
	}
	// A second section counts from where the first ended.
	target = c.expect(2)
	c.add(4)
	c.add(5)
	if err := c.wait(target, func() int64 { return 0 }); err == nil {
		t.Fatal("a message of the wrong size was not reported")
	}
	c = newCounter(1)
	target = c.expect(5)
	c.add(1)
	if err := c.wait(target, func() int64 { return 4 }); err == nil || !strings.Contains(err.Error(), "dropped 4") {
		t.Fatalf("drops not reported: %v", err)
	}
}

func TestAppendHPub(t *testing.T) {
	hdr := []byte("NATS/1.0\r\nA: b\r\n\r\n")
	got := string(AppendHPub(nil, "s", "r.1", hdr, []byte("xyz")))
	want := "HPUB s r.1 18 21\r\nNATS/1.0\r\nA: b\r\n\r\nxyz\r\n"
	if got != want {
		t.Fatalf("AppendHPub = %q, want %q", got, want)
	}
	if got := string(AppendHPub(nil, "s", "", hdr, nil)); got != "HPUB s 18 18\r\nNATS/1.0\r\nA: b\r\n\r\n\r\n" {
		t.Fatalf("AppendHPub without reply = %q", got)
	}
	// A []byte reply encodes as the string one.
	if got := string(AppendPub(nil, "s", []byte("r"), []byte("x"))); got != "PUB s r 1\r\nx\r\n" {
		t.Fatalf("AppendPub([]byte reply) = %q", got)
	}
}

func TestReaderNextData(t *testing.T) {
	stream := "MSG a 1 r.1 16\r\n{\"seq\":42,\"x\":1}\r\n" +
		"HMSG b 1 16 19\r\nNATS/1.0 204\r\n\r\nabc\r\n" +
		"PING\r\n"
	for name, rd := range map[string]io.Reader{
		"whole":   strings.NewReader(stream),
		"onebyte": iotest.OneByteReader(strings.NewReader(stream)),
	} {
		t.Run(name, func(t *testing.T) {
			r := NewReader(rd, 4096)
			op, err := r.NextData(nil)
			if err != nil || op.Kind != OpMsg || string(op.Data) != `{"seq":42,"x":1}` || op.HdrLen != 0 || string(op.Reply) != "r.1" {
				t.Fatalf("MSG: %+v, %v", op, err)
			}
			if seq, ok := jsonUint(op.Data, "seq"); !ok || seq != 42 {
				t.Fatalf("jsonUint(seq) = %d, %v", seq, ok)
			}
			op, err = r.NextData(nil)
			if err != nil || op.Kind != OpHMsg || op.HdrLen != 16 || op.Size != 19 || string(op.Data) != "NATS/1.0 204\r\n\r\nabc" {
				t.Fatalf("HMSG: %+v, %v", op, err)
			}
			op, err = r.Next(nil)
			if err != nil || op.Kind != OpPing || op.Data != nil {
				t.Fatalf("PING: %+v, %v", op, err)
			}
		})
	}
	for _, tc := range []struct {
		in   string
		key  string
		want uint64
		ok   bool
	}{
		{`{"stream":"S","seq":7}`, "seq", 7, true},
		{`{"stream":"S", "seq": 12,"count":3}`, "count", 3, true},
		{`{"type":"ack","seq":100,"msgs":100}`, "msgs", 100, true},
		{`{"error":{"code":503}}`, "seq", 0, false},
		{`{"seq":"x"}`, "seq", 0, false},
	} {
		got, ok := jsonUint([]byte(tc.in), tc.key)
		if got != tc.want || ok != tc.ok {
			t.Errorf("jsonUint(%s, %s) = %d, %v; want %d, %v", tc.in, tc.key, got, ok, tc.want, tc.ok)
		}
	}
	r := NewReader(strings.NewReader("HMSG b 1 20 19\r\nNATS/1.0 204\r\n\r\nabc\r\n"), 4096)
	if _, err := r.Next(nil); err == nil {
		t.Error("HMSG with a header larger than the total accepted")
	}
}

func TestNextSeq(t *testing.T) {
	for _, c := range []struct {
		i         int
		last, got uint64
		want      bool
	}{
		{0, 0, 1, true},
		{0, 5, 9, true},  // another client wrote 6–8 between runs
		{0, 5, 5, false}, // never the same or earlier
		{0, 5, 4, false},
		{1, 5, 6, true},
		{1, 5, 7, false}, // within a run, each is the next
	} {
		if got := nextSeq(c.i, c.last, c.got); got != c.want {
			t.Errorf("nextSeq(%d, %d, %d) = %v, want %v", c.i, c.last, c.got, got, c.want)
		}
	}
}
