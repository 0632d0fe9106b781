package proto

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
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
	before := cap(h.fields)
	h.Reset()
	if h.Len() != 0 || cap(h.fields) != before {
		t.Fatalf("after Reset Len %d cap %d, want 0 and %d", h.Len(), cap(h.fields), before)
	}
	// Reset clears the old fields so they do not pin their strings.
	if full := h.fields[:before]; full[0] != (HeaderField{}) || full[2] != (HeaderField{}) {
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
		if err := RawHeader(got[len("pre"):]).Validate(); err != nil {
			t.Errorf("%s: encoded block does not validate: %v", c.name, err)
		}
	}
}

func TestRawHeaderValidate(t *testing.T) {
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
		err := RawHeader(c.block).Validate()
		if c.ok != (err == nil) {
			t.Errorf("Validate(%q) = %v, want ok=%v", c.block, err, c.ok)
			continue
		}
		if err != nil && !errors.Is(err, ErrBadHeader) {
			t.Errorf("Validate(%q) = %v, want ErrBadHeader", c.block, err)
		}
		if c.block == "" {
			continue
		}
		// Header() refuses exactly what Validate refuses.
		h, err := RawHeader(c.block).Header()
		if c.ok != (err == nil) || (err != nil && (h != nil || !errors.Is(err, ErrBadHeader))) {
			t.Errorf("Header(%q) = %v, %v; want ok=%v", c.block, h, err, c.ok)
		}
	}
}

func TestRawHeaderStatus(t *testing.T) {
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
		{"NATS/1.0 503", 0, ""}, // no CRLF: no status line
		{"", 0, ""},
		{"garbage", 0, ""},
	}
	for _, c := range cases {
		code, desc := RawHeader(c.block).Status()
		if code != c.code || string(desc) != c.desc {
			t.Errorf("Status(%q) = %d %q, want %d %q", c.block, code, desc, c.code, c.desc)
		}
	}
}

func TestRawHeaderLookup(t *testing.T) {
	block := RawHeader("NATS/1.0 100 Idle Heartbeat\r\n" +
		"Nats-Last-Consumer: 5\r\n" +
		"Nats-TTL:  10s \t\r\n" +
		"Nats-Ttl:other\r\n" +
		"Multi: a\r\n" +
		"Multi:\tb\r\n" +
		"Empty:\r\n" +
		"Colon: x: y\r\n" +
		"\r\n")
	cases := []struct {
		key  string
		want string
		ok   bool
	}{
		{"Nats-Last-Consumer", "5", true},
		{"Nats-TTL", "10s", true},
		{"Nats-Ttl", "other", true},
		{"nats-ttl", "", false},
		{"NATS-LAST-CONSUMER", "", false},
		{"Multi", "a", true},
		{"Empty", "", true},
		{"Colon", "x: y", true},
		{"Idle Heartbeat", "", false}, // the status line is not a field
		{"NATS/1.0 100 Idle Heartbeat", "", false},
		{"Missing", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		v, ok := block.Lookup(c.key)
		if string(v) != c.want || ok != c.ok {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", c.key, v, ok, c.want, c.ok)
		}
		if g := block.Get(c.key); string(g) != c.want {
			t.Errorf("Get(%q) = %q, want %q", c.key, g, c.want)
		}
	}
	var all []string
	for k, v := range block.All() {
		all = append(all, string(k)+"="+string(v))
	}
	want := []string{"Nats-Last-Consumer=5", "Nats-TTL=10s", "Nats-Ttl=other", "Multi=a", "Multi=b", "Empty=", "Colon=x: y"}
	if !slices.Equal(all, want) {
		t.Errorf("All = %q, want %q", all, want)
	}
	// Lookup returns a view into the block, not a copy.
	v, _ := block.Lookup("Nats-Last-Consumer")
	if &v[0] != &block[len("NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: ")] {
		t.Errorf("Lookup value is not a view into the block")
	}
}

func TestRawHeaderAllStopsAtMalformedLine(t *testing.T) {
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
		var got []string
		for k, v := range RawHeader(c.block).All() {
			got = append(got, string(k)+"="+string(v))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("All(%q) = %q, want %q", c.block, got, c.want)
		}
	}
}

func TestRawHeaderRoundTrip(t *testing.T) {
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
	raw := RawHeader(block)
	if err := raw.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if code, desc := raw.Status(); code != 0 || len(desc) != 0 {
		t.Fatalf("Status = %d %q, want none", code, desc)
	}
	back, err := raw.Header()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fields(back), fields(&h)) {
		t.Fatalf("round trip %q, want %q", fields(back), fields(&h))
	}
	// The copy does not alias the block.
	for i := range block {
		block[i] = 'X'
	}
	if got := back.Get("Nats-Msg-Id"); got != "id-1" {
		t.Fatalf("Header() aliases the block: %q", got)
	}
	// A received block with a status line keeps only the fields.
	sb := RawHeader("NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 5\r\nNats-Last-Stream: 9\r\n\r\n")
	sh, err := sb.Header()
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(fields(sh)); got != "[Nats-Last-Consumer=5 Nats-Last-Stream=9]" {
		t.Fatalf("fields of status block: %s", got)
	}
}

func TestRawHeaderStatusNeedsSpace(t *testing.T) {
	for _, in := range []string{"NATS/1.0503\r\n\r\n", "NATS/1.0\t503\r\n\r\n", "NATS/1.0 50\r\n\r\n", "NATS/1.0 5034\r\n\r\n"} {
		if code, _ := RawHeader(in).Status(); code != 0 {
			t.Errorf("%q: status %d, want 0 for a malformed status line", in, code)
		}
	}
	if code, d := RawHeader("NATS/1.0 404 No Messages\r\n\r\n").Status(); code != 404 || string(d) != "No Messages" {
		t.Errorf("got %d %q", code, d)
	}
}
