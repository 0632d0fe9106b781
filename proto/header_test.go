package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// fields lists h's keys and values as "Key=Value" strings, in order.
func fields(h *Header) []string {
	var out []string
	for k, v := range h.All() {
		out = append(out, k+"="+v)
	}
	return out
}

func TestHeaderMethods(t *testing.T) {
	cases := []struct {
		name  string
		build func(h *Header)
		want  []string // fields after build, in order
	}{
		{"empty", func(h *Header) {}, nil},
		{"add keeps order", func(h *Header) {
			h.Add("B", "1")
			h.Add("A", "2")
			h.Add("B", "3")
		}, []string{"B=1", "A=2", "B=3"}},
		{"set on absent key appends", func(h *Header) {
			h.Add("A", "1")
			h.Set("B", "2")
		}, []string{"A=1", "B=2"}},
		{"set replaces first and drops the rest", func(h *Header) {
			h.Add("K", "1")
			h.Add("X", "x")
			h.Add("K", "2")
			h.Add("K", "3")
			h.Set("K", "new")
		}, []string{"K=new", "X=x"}},
		{"set is case-exact", func(h *Header) {
			h.Add("Nats-TTL", "1")
			h.Set("Nats-Ttl", "2")
		}, []string{"Nats-TTL=1", "Nats-Ttl=2"}},
		{"del removes every value", func(h *Header) {
			h.Add("K", "1")
			h.Add("X", "x")
			h.Add("K", "2")
			h.Del("K")
		}, []string{"X=x"}},
		{"del is case-exact", func(h *Header) {
			h.Add("Nats-TTL", "1")
			h.Add("Nats-Ttl", "2")
			h.Del("nats-ttl")
			h.Del("Nats-Ttl")
		}, []string{"Nats-TTL=1"}},
		{"del absent key", func(h *Header) {
			h.Add("A", "1")
			h.Del("B")
		}, []string{"A=1"}},
		{"del then add", func(h *Header) {
			h.Add("A", "1")
			h.Add("B", "2")
			h.Del("A")
			h.Add("A", "3")
		}, []string{"B=2", "A=3"}},
		{"reset then add", func(h *Header) {
			h.Add("A", "1")
			h.Add("B", "2")
			h.Reset()
			h.Add("C", "3")
		}, []string{"C=3"}},
		{"empty value", func(h *Header) { h.Add("A", "") }, []string{"A="}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var h Header
			c.build(&h)
			if got := fields(&h); !slices.Equal(got, c.want) {
				t.Fatalf("fields %q, want %q", got, c.want)
			}
			if h.Len() != len(c.want) {
				t.Fatalf("Len %d, want %d", h.Len(), len(c.want))
			}
		})
	}
}

func TestHeaderLookup(t *testing.T) {
	var h Header
	h.Add("Nats-TTL", "5s")
	h.Add("Nats-Ttl", "other")
	h.Add("Multi", "a")
	h.Add("Multi", "b")
	h.Add("Empty", "")
	cases := []struct {
		key    string
		want   string
		ok     bool
		values []string
	}{
		{"Nats-TTL", "5s", true, []string{"5s"}},
		{"Nats-Ttl", "other", true, []string{"other"}},
		{"nats-ttl", "", false, nil},
		{"NATS-TTL", "", false, nil},
		{"Multi", "a", true, []string{"a", "b"}},
		{"Empty", "", true, []string{""}},
		{"Missing", "", false, nil},
		{"", "", false, nil},
	}
	for _, c := range cases {
		v, ok := h.Lookup(c.key)
		if v != c.want || ok != c.ok {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", c.key, v, ok, c.want, c.ok)
		}
		if g := h.Get(c.key); g != c.want {
			t.Errorf("Get(%q) = %q, want %q", c.key, g, c.want)
		}
		if got := slices.Collect(h.Values(c.key)); !slices.Equal(got, c.values) {
			t.Errorf("Values(%q) = %q, want %q", c.key, got, c.values)
		}
	}
}

func TestHeaderIteratorsStopEarly(t *testing.T) {
	var h Header
	h.Add("K", "1")
	h.Add("K", "2")
	h.Add("J", "3")
	n := 0
	for range h.Values("K") {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("Values yielded %d after break", n)
	}
	n = 0
	for range h.All() {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("All yielded %d after break", n)
	}
}

func TestHeaderNil(t *testing.T) {
	var h *Header
	if v, ok := h.Lookup("A"); v != "" || ok {
		t.Errorf("nil Lookup = %q, %v", v, ok)
	}
	if h.Get("A") != "" || h.Len() != 0 || h.Clone() != nil || h.Validate() != nil {
		t.Errorf("nil Get/Len/Clone/Validate misbehave")
	}
	if got := slices.Collect(h.Values("A")); len(got) != 0 {
		t.Errorf("nil Values = %q", got)
	}
	if got := fields(h); len(got) != 0 {
		t.Errorf("nil All = %q", got)
	}
	if n := h.EncodedLen(); n != len("NATS/1.0\r\n\r\n") {
		t.Errorf("nil EncodedLen = %d", n)
	}
	b, err := AppendHeaderBlock([]byte("x"), h)
	if err != nil || string(b) != "xNATS/1.0\r\n\r\n" {
		t.Errorf("nil AppendHeaderBlock = %q, %v", b, err)
	}
}

func TestHeaderReuseKeepsCapacity(t *testing.T) {
	var h Header
	h.Add("A", "1")
	h.Add("B", "2")
	h.Add("C", "3")
	f := h.f
	before := cap(f.s)
	h.Reset()
	if h.Len() != 0 || h.f != f || cap(f.s) != before {
		t.Fatalf("after Reset Len %d cap %d, want 0 and %d", h.Len(), cap(f.s), before)
	}
	// Reset clears the old fields so they do not pin their strings.
	if full := f.s[:before]; full[0] != (HeaderField{}) || full[2] != (HeaderField{}) {
		t.Fatalf("Reset left stale fields: %q", full)
	}
}

func TestHeaderClone(t *testing.T) {
	var h Header
	h.Add("A", "1")
	h.Add("A", "2")
	h.Add("b", "3")
	c := h.Clone()
	if !slices.Equal(fields(c), fields(&h)) {
		t.Fatalf("clone %q, want %q", fields(c), fields(&h))
	}
	// Changes to either side do not show through the other.
	c.Set("A", "changed")
	h.Add("New", "x")
	if got := fields(&h); !slices.Equal(got, []string{"A=1", "A=2", "b=3", "New=x"}) {
		t.Fatalf("original changed through clone: %q", got)
	}
	if got := fields(c); !slices.Equal(got, []string{"A=changed", "b=3"}) {
		t.Fatalf("clone changed through original: %q", got)
	}
	var empty Header
	if c := empty.Clone(); c == nil || c.Len() != 0 {
		t.Fatalf("clone of empty header: %v", c)
	}
}

func TestHeaderValidate(t *testing.T) {
	cases := []struct {
		key, value string
		ok         bool
	}{
		{"Nats-Msg-Id", "abc", true},
		{"Nats-TTL", "5s", true},
		{"X!#$%&'*+-.^_`|~09az", "v", true},
		{"K", "", true},
		{"K", "value with spaces\tand tab", true},
		{"K", "é ünïcödé", true},
		{"", "v", false},
		{":", "v", false},
		{"a:b", "v", false},
		{"a b", "v", false},
		{"a\r", "v", false},
		{"\n", "v", false},
		{"\t", "v", false},
		{"a\x00", "v", false},
		{"\x00", "v", false},
		{"é", "v", false},
		{"a\x7f", "v", false},
		{"a\xff", "v", false},
		{"a(b)", "v", false},
		{"a\"b", "v", false},
		{"K", "a\rb", false},
		{"K", "a\nb", false},
		{"K", "\r\n", false},
		{"K", "a\x00", false},
	}
	for _, c := range cases {
		var h Header
		h.Add("Good", "ok")
		h.Add(c.key, c.value)
		err := h.Validate()
		if c.ok != (err == nil) {
			t.Errorf("Validate(%q: %q) = %v, want ok=%v", c.key, c.value, err, c.ok)
			continue
		}
		if err != nil && !errors.Is(err, ErrBadHeader) {
			t.Errorf("Validate(%q: %q) = %v, want ErrBadHeader", c.key, c.value, err)
		}
		// AppendHeaderBlock refuses exactly what Validate refuses.
		dst := []byte("keep")
		out, err := AppendHeaderBlock(dst, &h)
		if c.ok != (err == nil) {
			t.Errorf("AppendHeaderBlock(%q: %q) error %v, want ok=%v", c.key, c.value, err, c.ok)
		}
		if err != nil && (string(out) != "keep" || len(out) != len(dst)) {
			t.Errorf("AppendHeaderBlock(%q: %q) wrote %q on error", c.key, c.value, out)
		}
	}
}

func TestHeaderEncoding(t *testing.T) {
	cases := []struct {
		name  string
		build func(h *Header)
		want  string
	}{
		{"empty", func(h *Header) {}, "NATS/1.0\r\n\r\n"},
		{"one", func(h *Header) { h.Add("Nats-Msg-Id", "1") }, "NATS/1.0\r\nNats-Msg-Id: 1\r\n\r\n"},
		{"case kept", func(h *Header) { h.Add("nats-TTL", "5s") }, "NATS/1.0\r\nnats-TTL: 5s\r\n\r\n"},
		{"multi", func(h *Header) {
			h.Add("A", "1")
			h.Add("B", "")
			h.Add("A", "2")
		}, "NATS/1.0\r\nA: 1\r\nB: \r\nA: 2\r\n\r\n"},
		{"long", func(h *Header) { h.Add("K", strings.Repeat("v", 1000)) }, "NATS/1.0\r\nK: " + strings.Repeat("v", 1000) + "\r\n\r\n"},
	}
	for _, c := range cases {
		var h Header
		c.build(&h)
		got, err := AppendHeaderBlock([]byte("pre"), &h)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if string(got) != "pre"+c.want {
			t.Errorf("%s: block %q, want %q", c.name, got, "pre"+c.want)
		}
		if n := h.EncodedLen(); n != len(got)-len("pre") {
			t.Errorf("%s: EncodedLen %d, block is %d bytes", c.name, n, len(got)-len("pre"))
		}
		if err := ValidateHeaderBlock(got[len("pre"):]); err != nil {
			t.Errorf("%s: encoded block does not validate: %v", c.name, err)
		}
	}
}

func TestValidateHeaderBlock(t *testing.T) {
	cases := []struct {
		block string
		ok    bool
	}{
		{"", true}, // no block
		{"NATS/1.0\r\n\r\n", true},
		{"NATS/1.0 503\r\n\r\n", true},
		{"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 5\r\nNats-Last-Stream: 9\r\n\r\n", true},
		{"NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 10\r\nNats-Pending-Bytes: 1024\r\n\r\n", true},
		{"NATS/1.0\r\nA: 1\r\nA: 2\r\n\r\n", true},
		{"NATS/1.0\r\nA:\r\n\r\n", true},
		{"NATS/1.0\r\nA:no-space\r\n\r\n", true},
		{"NATS/1.0\r\nA: x: y\r\n\r\n", true},

		{"NATS/1.1\r\n\r\n", false},
		{"nats/1.0\r\n\r\n", false},
		{"HTTP/1.0\r\n\r\n", false},
		{"NATS/1.0", false},
		{"NATS/1.0\r\n", false},
		{" NATS/1.0\r\n\r\n", false},
		{"NATS/1.00\r\n\r\n", false},
		{"NATS/1.0 50\r\n\r\n", false},
		{"NATS/1.0 5030\r\n\r\n", false},
		{"NATS/1.0 5a3\r\n\r\n", false},
		{"NATS/1.0 503x\r\n\r\n", false},
		{"NATS/1.0\r\nA: 1\r\n", false},     // no final empty line
		{"NATS/1.0 503\r\nA: 1\r\n", false}, // no final empty line
		{"NATS/1.0\r\nA 1\r\n\r\n", false},  // line without ':'
		{"NATS/1.0\r\n: 1\r\n\r\n", false},  // empty key
		{"NATS/1.0\nA: 1\r\n\r\n", false},   // bare \n on status line
		{"NATS/1.0\r\nA: 1\n\r\n", false},   // bare \n after a field
		{"NATS/1.0\r\nA: 1\nB: 2\r\n\r\n", false},
		{"NATS/1.0\r\nA: 1\r\r\n\r\n", false}, // CR inside a value
		{"NATS/1.0\r\n\r\nX", false},          // trailing bytes
		{"NATS/1.0\r\n\r\n\r\n", false},
		{"NATS/1.0\r\n\r\nA: 1\r\n\r\n", false}, // fields after the empty line
		{"NATS/1.0\r\nA b: 1\r\n\r\n", false},
		{"NATS/1.0\r\nA\tb: 1\r\n\r\n", false},
		{"NATS/1.0\r\né: 1\r\n\r\n", false},
		{"NATS/1.0\r\nA\x00: 1\r\n\r\n", false},
		{"NATS/1.0\r\n(A): 1\r\n\r\n", false},
	}
	for _, c := range cases {
		err := ValidateHeaderBlock([]byte(c.block))
		if c.ok != (err == nil) {
			t.Errorf("ValidateHeaderBlock(%q) = %v, want ok=%v", c.block, err, c.ok)
			continue
		}
		if err != nil && !errors.Is(err, ErrBadHeader) {
			t.Errorf("ValidateHeaderBlock(%q) = %v, want ErrBadHeader", c.block, err)
		}
		// A received header validates as its block does, and publishing
		// it refuses exactly what that refuses.
		h := received(c.block)
		if herr := h.Validate(); (herr == nil) != (err == nil) {
			t.Errorf("HeaderFromBlock(%q).Validate() = %v, block %v", c.block, herr, err)
		}
		out, aerr := AppendHeaderBlock([]byte("keep"), h)
		if (aerr == nil) != (err == nil) {
			t.Errorf("AppendHeaderBlock(%q) = %v, want ok=%v", c.block, aerr, c.ok)
		}
		if aerr != nil && string(out) != "keep" {
			t.Errorf("AppendHeaderBlock(%q) wrote %q on error", c.block, out)
		}
		if aerr == nil && c.block != "" && string(out) != "keep"+c.block {
			t.Errorf("AppendHeaderBlock(%q) = %q, want the block as received", c.block, out)
		}
	}
}

func TestReceivedHeaderStatus(t *testing.T) {
	cases := []struct {
		block string
		code  int
		desc  string
	}{
		{"NATS/1.0\r\n\r\n", 0, ""},
		{"NATS/1.0\r\nStatus: 503\r\n\r\n", 0, ""},
		{"NATS/1.0 503\r\n\r\n", 503, ""},
		{"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 5\r\nNats-Last-Stream: 9\r\n\r\n", 100, "Idle Heartbeat"},
		{"NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 10\r\n\r\n", 408, "Request Timeout"},
		{"NATS/1.0 404 No Messages\r\n\r\n", 404, "No Messages"},
		{"NATS/1.0 409 Consumer Deleted\r\n\r\n", 409, "Consumer Deleted"},
		{"NATS/1.0 000\r\n\r\n", 0, ""},
		{"NATS/1.0 999 x\r\n\r\n", 999, "x"},
		{"NATS/1.0 503 \r\n\r\n", 503, ""},
		{"NATS/1.0 50\r\n\r\n", 0, ""},
		{"NATS/1.0 5030\r\n\r\n", 0, ""},
		{"NATS/1.0 5x3\r\n\r\n", 0, ""},
		{"NATS/1.0 503x\r\n\r\n", 0, ""},
		{"NATS/2.0 503\r\n\r\n", 0, ""},
		{"NATS/1.0503\r\n\r\n", 0, ""}, // the code needs a space before it
		{"NATS/1.0\t503\r\n\r\n", 0, ""},
		{"NATS/1.0 503", 0, ""}, // no CRLF: no status line
		{"", 0, ""},
		{"garbage", 0, ""},
	}
	for _, c := range cases {
		code, desc := received(c.block).Status()
		if code != c.code || desc != c.desc {
			t.Errorf("Status(%q) = %d %q, want %d %q", c.block, code, desc, c.code, c.desc)
		}
	}
	// A built header has no status line, and a modified received header
	// loses its own.
	var built Header
	built.Add("Status", "503")
	if code, desc := built.Status(); code != 0 || desc != "" {
		t.Errorf("built header Status = %d %q", code, desc)
	}
	h := received("NATS/1.0 503 No Responders\r\nK: v\r\n\r\n")
	h.Add("J", "1")
	if code, _ := h.Status(); code != 0 {
		t.Errorf("modified received header keeps status %d", code)
	}
	var nilH *Header
	if code, desc := nilH.Status(); code != 0 || desc != "" {
		t.Errorf("nil Status = %d %q", code, desc)
	}
}

// receivedBlock is a received header block with case variants, repeated
// keys, blanks around values and a status line.
const receivedBlock = "NATS/1.0 100 Idle Heartbeat\r\n" +
	"Nats-Last-Consumer: 5\r\n" +
	"Nats-TTL:  10s \t\r\n" +
	"Nats-Ttl:other\r\n" +
	"Multi: a\r\n" +
	"Multi:\tb\r\n" +
	"Empty:\r\n" +
	"Colon: x: y\r\n" +
	"\r\n"

// receivedFields is receivedBlock's fields in wire order, blanks trimmed.
var receivedFields = []string{"Nats-Last-Consumer=5", "Nats-TTL=10s", "Nats-Ttl=other", "Multi=a", "Multi=b", "Empty=", "Colon=x: y"}

func TestReceivedHeaderLookup(t *testing.T) {
	block := []byte(receivedBlock)
	h := HeaderFromBlock(block)
	cases := []struct {
		key    string
		want   string
		ok     bool
		values []string
	}{
		{"Nats-Last-Consumer", "5", true, []string{"5"}},
		{"Nats-TTL", "10s", true, []string{"10s"}},
		{"Nats-Ttl", "other", true, []string{"other"}},
		{"nats-ttl", "", false, nil},
		{"NATS-LAST-CONSUMER", "", false, nil},
		{"Multi", "a", true, []string{"a", "b"}},
		{"Empty", "", true, []string{""}},
		{"Colon", "x: y", true, []string{"x: y"}},
		{"Idle Heartbeat", "", false, nil}, // the status line is not a field
		{"NATS/1.0 100 Idle Heartbeat", "", false, nil},
		{"Colon: x", "", false, nil},
		{"Missing", "", false, nil},
		{"", "", false, nil},
	}
	for _, c := range cases {
		v, ok := h.Lookup(c.key)
		if v != c.want || ok != c.ok {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", c.key, v, ok, c.want, c.ok)
		}
		if g := h.Get(c.key); g != c.want {
			t.Errorf("Get(%q) = %q, want %q", c.key, g, c.want)
		}
		if got := slices.Collect(h.Values(c.key)); !slices.Equal(got, c.values) {
			t.Errorf("Values(%q) = %q, want %q", c.key, got, c.values)
		}
	}
	if got := fields(&h); !slices.Equal(got, receivedFields) {
		t.Errorf("All = %q, want %q", got, receivedFields)
	}
	if h.Len() != len(receivedFields) || h.IsZero() {
		t.Errorf("Len %d IsZero %v, want %d false", h.Len(), h.IsZero(), len(receivedFields))
	}
	// Reads return views of the block, not copies, and leave it in
	// place.
	v, _ := h.Lookup("Nats-Last-Consumer")
	if unsafe.StringData(v) != &block[len("NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: ")] {
		t.Errorf("Lookup value is not a view of the block")
	}
	for k := range h.All() {
		if unsafe.StringData(k) != &block[len("NATS/1.0 100 Idle Heartbeat\r\n")] {
			t.Errorf("All key is not a view of the block")
		}
		break
	}
	_, d := h.Status()
	if unsafe.StringData(d) != &block[len("NATS/1.0 100 ")] {
		t.Errorf("Status description is not a view of the block")
	}
	if b := h.Block(); &b[0] != &block[0] || len(b) != len(block) {
		t.Errorf("Block is not the received block")
	}
	if string(block) != receivedBlock {
		t.Errorf("reads modified the block: %q", block)
	}
}

func TestReceivedHeaderStopsAtMalformedLine(t *testing.T) {
	cases := []struct {
		block string
		want  []string
	}{
		{"", nil},
		{"NATS/1.0\r\n\r\n", nil},
		{"NATS/1.0\r\nA: 1\r\nbroken\r\nB: 2\r\n\r\n", []string{"A=1"}},
		{"NATS/1.0\r\nA: 1\nB: 2\r\n\r\n", nil},
		{"NATS/1.0\r\nA: 1\r\nB: 2", []string{"A=1"}},
		{"NATS/1.0\r\nA: 1\r\n\r\nB: 2\r\n\r\n", []string{"A=1"}},
	}
	for _, c := range cases {
		h := received(c.block)
		if got := fields(h); !slices.Equal(got, c.want) {
			t.Errorf("All(%q) = %q, want %q", c.block, got, c.want)
		}
		if h.Len() != len(c.want) {
			t.Errorf("Len(%q) = %d, want %d", c.block, h.Len(), len(c.want))
		}
		if _, ok := h.Lookup("B"); ok {
			t.Errorf("Lookup(%q, B) found a field past the malformed line", c.block)
		}
		// Modifying takes the fields All yields.
		h.Add("Z", "9")
		if got := fields(h); !slices.Equal(got, append(slices.Clone(c.want), "Z=9")) {
			t.Errorf("after Add(%q) = %q", c.block, got)
		}
	}
}

func TestReceivedHeaderModify(t *testing.T) {
	cases := []struct {
		name   string
		modify func(h *Header)
		want   []string
	}{
		{"add", func(h *Header) { h.Add("Multi", "c") }, append(slices.Clone(receivedFields), "Multi=c")},
		{"set existing", func(h *Header) { h.Set("Multi", "z") },
			[]string{"Nats-Last-Consumer=5", "Nats-TTL=10s", "Nats-Ttl=other", "Multi=z", "Empty=", "Colon=x: y"}},
		{"set is case-exact", func(h *Header) { h.Set("nats-ttl", "1") }, append(slices.Clone(receivedFields), "nats-ttl=1")},
		{"del", func(h *Header) { h.Del("Multi") },
			[]string{"Nats-Last-Consumer=5", "Nats-TTL=10s", "Nats-Ttl=other", "Empty=", "Colon=x: y"}},
		{"del is case-exact", func(h *Header) { h.Del("Nats-TTL") },
			[]string{"Nats-Last-Consumer=5", "Nats-Ttl=other", "Multi=a", "Multi=b", "Empty=", "Colon=x: y"}},
		{"reset", func(h *Header) { h.Reset() }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			block := []byte(receivedBlock)
			h := HeaderFromBlock(block)
			c.modify(&h)
			if got := fields(&h); !slices.Equal(got, c.want) {
				t.Fatalf("fields %q, want %q", got, c.want)
			}
			if h.Len() != len(c.want) {
				t.Fatalf("Len %d, want %d", h.Len(), len(c.want))
			}
			// The block and its status line are dropped; the encoding
			// is the fields'.
			if h.Block() != nil {
				t.Fatalf("Block still set after %s", c.name)
			}
			if code, _ := h.Status(); code != 0 {
				t.Fatalf("status %d after %s", code, c.name)
			}
			enc, err := AppendHeaderBlock(nil, &h)
			if err != nil {
				t.Fatal(err)
			}
			back := HeaderFromBlock(enc)
			if got := fields(&back); !slices.Equal(got, c.want) {
				t.Fatalf("encoded %q gives %q, want %q", enc, got, c.want)
			}
			if h.EncodedLen() != len(enc) {
				t.Fatalf("EncodedLen %d, block %d", h.EncodedLen(), len(enc))
			}
			if string(block) != receivedBlock {
				t.Fatalf("modifying wrote into the received block: %q", block)
			}
			// The kept values are views of the block, not copies.
			if v, ok := h.Lookup("Nats-Last-Consumer"); ok &&
				unsafe.StringData(v) != &block[len("NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: ")] {
				t.Fatalf("materialised value was copied")
			}
		})
	}
}

func TestReceivedHeaderDelAbsentKeepsBlock(t *testing.T) {
	h := received("NATS/1.0 503\r\nK: v\r\n\r\n")
	h.Del("Missing")
	h.Del("k")
	if string(h.Block()) != "NATS/1.0 503\r\nK: v\r\n\r\n" {
		t.Fatalf("Del of an absent key dropped the block: %q", h.Block())
	}
	if code, _ := h.Status(); code != 503 {
		t.Fatalf("status %d after Del of an absent key", code)
	}
	h.Del("K")
	if h.Block() != nil || !h.IsZero() || h.Len() != 0 {
		t.Fatalf("after Del of the only key: block %q, zero %v, len %d", h.Block(), h.IsZero(), h.Len())
	}
}

func TestHeaderIsZero(t *testing.T) {
	var zero Header
	var nilH *Header
	fromNil := HeaderFromBlock(nil)
	if !zero.IsZero() || !nilH.IsZero() || !fromNil.IsZero() || !received("").IsZero() {
		t.Fatal("zero, nil and empty-block headers must be zero")
	}
	for _, b := range []string{"NATS/1.0\r\n\r\n", "NATS/1.0 503\r\n\r\n", "NATS/1.0\r\nK: v\r\n\r\n"} {
		if received(b).IsZero() {
			t.Errorf("received %q is zero", b)
		}
	}
	var h Header
	h.Add("K", "v")
	if h.IsZero() {
		t.Fatal("header with a field is zero")
	}
	h.Reset()
	if !h.IsZero() {
		t.Fatal("Reset header is not zero")
	}
	// The zero value is ready to use in both directions.
	zero.Set("K", "v")
	if got := fields(&zero); !slices.Equal(got, []string{"K=v"}) {
		t.Fatalf("zero value after Set: %q", got)
	}
}

func TestReceivedHeaderClone(t *testing.T) {
	block := []byte("NATS/1.0 404 No Messages\r\nK: v\r\nK: w\r\n\r\n")
	h := HeaderFromBlock(block)
	c := h.Clone()
	m := HeaderFromBlock(block)
	m.Add("New", "x")
	mc := m.Clone()
	// Overwrite the received memory, as a lender would after its
	// handler returns: the clones keep what they had.
	for i := range block {
		block[i] = 'X'
	}
	if got := fields(c); !slices.Equal(got, []string{"K=v", "K=w"}) {
		t.Fatalf("clone of received header %q", got)
	}
	if code, desc := c.Status(); code != 404 || desc != "No Messages" {
		t.Fatalf("clone lost the status: %d %q", code, desc)
	}
	if got := fields(mc); !slices.Equal(got, []string{"K=v", "K=w", "New=x"}) {
		t.Fatalf("clone of modified received header %q", got)
	}
}

func TestHeaderOf(t *testing.T) {
	m := map[string][]string{
		"b":        {"1"},
		"A":        {"x", "y"},
		"Nats-TTL": {"5s"},
		"Nats-Ttl": {"other"},
		"a":        {"2"},
		"None":     {},
		"Nil":      nil,
	}
	want := []string{"A=x", "A=y", "Nats-TTL=5s", "Nats-Ttl=other", "a=2", "b=1"}
	first := HeaderOf(m)
	if got := fields(&first); !slices.Equal(got, want) {
		t.Fatalf("HeaderOf = %q, want %q", got, want)
	}
	enc, err := AppendHeaderBlock(nil, &first)
	if err != nil {
		t.Fatal(err)
	}
	// Map iteration order changes from run to run; the header must not.
	for range 50 {
		h := HeaderOf(m)
		again, err := AppendHeaderBlock(nil, &h)
		if err != nil || !bytes.Equal(again, enc) {
			t.Fatalf("HeaderOf is not deterministic: %q, then %q", enc, again)
		}
	}
	for _, empty := range []map[string][]string{nil, {}, {"K": nil}} {
		if h := HeaderOf(empty); !h.IsZero() {
			t.Errorf("HeaderOf(%v) is not zero", empty)
		}
	}
}

func TestNewHeader(t *testing.T) {
	h := NewHeader("B", "1", "A", "2", "B", "3")
	if got := fields(h); !slices.Equal(got, []string{"B=1", "A=2", "B=3"}) {
		t.Fatalf("NewHeader = %q", got)
	}
	if h := NewHeader(); h == nil || !h.IsZero() {
		t.Fatalf("NewHeader() = %v", h)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("NewHeader with an odd count did not panic")
		}
	}()
	//lint:ignore SA5012 the odd count is what this checks
	NewHeader("K")
}

func TestHeaderJSON(t *testing.T) {
	cases := []struct {
		name string
		h    *Header
		want string
	}{
		{"zero", &Header{}, `{}`},
		{"built", NewHeader("b", "1", "A", "x", "b", "2", "Nats-Ttl", "t", "Nats-TTL", "T"),
			`{"A":["x"],"Nats-TTL":["T"],"Nats-Ttl":["t"],"b":["1","2"]}`},
		{"escaped", NewHeader("K", "\"quoted\" é"), `{"K":["\"quoted\" é"]}`},
		{"received", received("NATS/1.0 503 No Responders\r\nK: v\r\nJ: 1\r\nK: w\r\n\r\n"),
			`{"J":["1"],"K":["v","w"]}`},
		{"status only", received("NATS/1.0 503\r\n\r\n"), `{}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.h)
		if err != nil || string(b) != c.want {
			t.Errorf("%s: Marshal = %s, %v; want %s", c.name, b, err, c.want)
		}
		// As a value too, the way a struct field is encoded.
		if b, err := json.Marshal(*c.h); err != nil || string(b) != c.want {
			t.Errorf("%s: Marshal of the value = %s, %v; want %s", c.name, b, err, c.want)
		}
		var back Header
		if err := json.Unmarshal([]byte(c.want), &back); err != nil {
			t.Errorf("%s: Unmarshal: %v", c.name, err)
		}
		if b, _ := json.Marshal(back); string(b) != c.want {
			t.Errorf("%s: round trip %s, want %s", c.name, b, c.want)
		}
	}

	// Decoding takes keys in sorted order, values in order, and replaces
	// what the header held.
	h := NewHeader("Old", "1")
	if err := json.Unmarshal([]byte(`{"b":["1","2"],"A":["x"],"E":[],"N":null}`), h); err != nil {
		t.Fatal(err)
	}
	if got := fields(h); !slices.Equal(got, []string{"A=x", "b=1", "b=2"}) {
		t.Fatalf("Unmarshal = %q", got)
	}
	if err := json.Unmarshal([]byte(`null`), h); err != nil || !h.IsZero() {
		t.Fatalf("Unmarshal null: %v, %q", err, fields(h))
	}
	h = NewHeader("Keep", "1")
	for _, bad := range []string{`{"K":"v"}`, `["K"]`, `{"K":[1]}`, `{`} {
		if err := json.Unmarshal([]byte(bad), h); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
		if got := fields(h); !slices.Equal(got, []string{"Keep=1"}) {
			t.Errorf("failed Unmarshal(%s) changed the header: %q", bad, got)
		}
	}

	// A struct field with omitzero is left out when the header is zero,
	// as a map with omitempty is.
	type meta struct {
		Name    string `json:"name"`
		Headers Header `json:"headers,omitzero"`
	}
	if b, _ := json.Marshal(meta{Name: "x"}); string(b) != `{"name":"x"}` {
		t.Errorf("zero header field: %s", b)
	}
	b, _ := json.Marshal(meta{Name: "x", Headers: HeaderOf(map[string][]string{"K": {"v1", "v2"}})})
	if string(b) != `{"name":"x","headers":{"K":["v1","v2"]}}` {
		t.Errorf("header field: %s", b)
	}
	var mv meta
	if err := json.Unmarshal(b, &mv); err != nil || !slices.Equal(fields(&mv.Headers), []string{"K=v1", "K=v2"}) {
		t.Errorf("decode header field: %v %q", err, fields(&mv.Headers))
	}
}

func TestHeaderString(t *testing.T) {
	h := NewHeader("K", "v", "J", "1")
	if got := fmt.Sprint(h); got != "NATS/1.0\r\nK: v\r\nJ: 1\r\n\r\n" {
		t.Errorf("String = %q", got)
	}
	r := received("NATS/1.0 503\r\nK:  v\r\n\r\n")
	if got := fmt.Sprintf("%v", *r); got != "NATS/1.0 503\r\nK:  v\r\n\r\n" {
		t.Errorf("String of received header = %q", got)
	}
	if got := fmt.Sprint(Header{}); got != "NATS/1.0\r\n\r\n" {
		t.Errorf("String of zero header = %q", got)
	}
}

func TestReceivedHeaderRoundTrip(t *testing.T) {
	var h Header
	h.Add("Nats-Msg-Id", "id-1")
	h.Add("Nats-TTL", "5s")
	h.Add("Nats-Ttl", "distinct")
	h.Add("Multi", "a")
	h.Add("Multi", "b")
	h.Add("Empty", "")
	block, err := AppendHeaderBlock(nil, &h)
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateHeaderBlock(block); err != nil {
		t.Fatalf("ValidateHeaderBlock: %v", err)
	}
	back := HeaderFromBlock(block)
	if code, desc := back.Status(); code != 0 || desc != "" {
		t.Fatalf("Status = %d %q, want none", code, desc)
	}
	if !slices.Equal(fields(&back), fields(&h)) {
		t.Fatalf("round trip %q, want %q", fields(&back), fields(&h))
	}
	if back.EncodedLen() != h.EncodedLen() {
		t.Fatalf("EncodedLen %d, want %d", back.EncodedLen(), h.EncodedLen())
	}
	// A received block with a status line keeps only the fields.
	sb := received("NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 5\r\nNats-Last-Stream: 9\r\n\r\n")
	if got := fmt.Sprint(fields(sb)); got != "[Nats-Last-Consumer=5 Nats-Last-Stream=9]" {
		t.Fatalf("fields of status block: %s", got)
	}
}

// TestHeaderSize: every delivered message holds a Header by value, so its
// size is part of every message's (conn.Msg is 88 bytes with this one).
func TestHeaderSize(t *testing.T) {
	if n := unsafe.Sizeof(Header{}); n != 24 {
		t.Fatalf("unsafe.Sizeof(Header{}) = %d, want 24", n)
	}
}

// TestHeaderCopySharesFields: a Header refers to its fields as a map does.
func TestHeaderCopySharesFields(t *testing.T) {
	var h Header
	h.Add("A", "1")
	c := h
	c.Add("B", "2")
	c.Set("A", "x")
	if got := fields(&h); !slices.Equal(got, []string{"A=x", "B=2"}) {
		t.Fatalf("original after modifying a copy: %q, want the copy's fields", got)
	}
	c.Reset()
	if !h.IsZero() {
		t.Fatalf("original after resetting a copy: %q", fields(&h))
	}

	// Clone is independent.
	h.Add("A", "1")
	k := h.Clone()
	k.Add("B", "2")
	k.Set("A", "x")
	if got := fields(&h); !slices.Equal(got, []string{"A=1"}) {
		t.Fatalf("original after modifying a clone: %q", got)
	}

	// The zero Header and an unmodified received one have no fields to
	// share: modifying a copy leaves the original as it was.
	var z Header
	zc := z
	zc.Add("A", "1")
	if !z.IsZero() {
		t.Fatalf("zero Header after modifying a copy: %q", fields(&z))
	}
	r := HeaderFromBlock([]byte("NATS/1.0 100 Idle\r\nA: 1\r\nB: 2\r\n\r\n"))
	rc := r
	rc.Set("A", "x")
	rc.Del("B")
	if got := fields(&r); !slices.Equal(got, []string{"A=1", "B=2"}) || r.Block() == nil {
		t.Fatalf("received header after modifying a copy: %q", got)
	}
	if code, _ := r.Status(); code != 100 {
		t.Fatalf("received header's status after modifying a copy: %d", code)
	}
	if got := fields(&rc); !slices.Equal(got, []string{"A=x"}) || rc.Block() != nil {
		t.Fatalf("modified copy: %q", got)
	}
}

// TestHeaderBlockIsTheReceivedMemory: Block returns the bytes given to
// HeaderFromBlock, not a copy, and Clone copies them.
func TestHeaderBlockIsTheReceivedMemory(t *testing.T) {
	b := []byte("NATS/1.0\r\nA: 1\r\n\r\nrest")
	blk := b[:len(b)-4]
	h := HeaderFromBlock(blk)
	got := h.Block()
	if len(got) != len(blk) || unsafe.SliceData(got) != unsafe.SliceData(blk) {
		t.Fatalf("Block() = %p len %d, want %p len %d", unsafe.SliceData(got), len(got), unsafe.SliceData(blk), len(blk))
	}
	v, _ := h.Lookup("A")
	if unsafe.StringData(v) != &b[len("NATS/1.0\r\nA: ")] {
		t.Fatalf("Lookup is not a view of the block")
	}
	c := h.Clone()
	if cb := c.Block(); !bytes.Equal(cb, blk) || unsafe.SliceData(cb) == unsafe.SliceData(blk) {
		t.Fatalf("Clone's block %q shares the received memory or differs", cb)
	}
	var built Header
	built.Add("A", "1")
	empty := HeaderFromBlock([]byte{})
	if built.Block() != nil || empty.Block() != nil || !empty.IsZero() {
		t.Fatalf("Block of a built or empty header is not nil")
	}
}

// TestHeaderFieldsGrow: past the four inline fields a header keeps every
// field in order, for built, received-then-modified and cloned headers.
func TestHeaderFieldsGrow(t *testing.T) {
	var want []string
	var h Header
	for i := range 9 {
		h.Add(fmt.Sprint("K", i), fmt.Sprint(i))
		want = append(want, fmt.Sprintf("K%d=%d", i, i))
	}
	if got := fields(&h); !slices.Equal(got, want) || h.Len() != 9 {
		t.Fatalf("built: %q", got)
	}
	if got := fields(h.Clone()); !slices.Equal(got, want) {
		t.Fatalf("clone: %q", got)
	}
	block, err := AppendHeaderBlock(nil, &h)
	if err != nil {
		t.Fatal(err)
	}
	r := HeaderFromBlock(block)
	r.Add("K9", "9")
	want = append(want, "K9=9")
	if got := fields(&r); !slices.Equal(got, want) {
		t.Fatalf("received and modified: %q", got)
	}
	if got := fields(NewHeader("A", "1", "B", "2", "C", "3", "D", "4", "E", "5")); len(got) != 5 || got[4] != "E=5" {
		t.Fatalf("NewHeader: %q", got)
	}
}
