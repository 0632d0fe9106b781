package proto

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSubjectValidation(t *testing.T) {
	const T, F = true, false
	cases := []struct {
		s                    string
		pub, sub, queue, lit bool
	}{
		{"", F, F, F, T},
		{".", F, F, T, T},
		{"a.", F, F, T, T},
		{".a", F, F, T, T},
		{"a..b", F, F, T, T},
		{"a b", F, F, F, T},
		{"a\tb", F, F, F, T},
		{"a\r", F, F, F, T},
		{"a\n", F, F, F, T},
		{"\x00", F, F, F, T},
		{"a\x00b", F, F, F, T},
		{"\x7f", F, F, F, T},
		{"a.\x01", F, F, F, T},
		{"\xff", F, F, F, T},
		{"a.\xc3", F, F, F, T}, // truncated UTF-8 sequence
		{"é.x", T, T, T, T},
		{"日本.語", T, T, T, T},
		{"*", F, T, T, F},
		{">", F, T, T, F},
		{"a.*", F, T, T, F},
		{"a.>", F, T, T, F},
		{"*.a", F, T, T, F},
		{"a.*.b", F, T, T, F},
		{"*.*.>", F, T, T, F},
		{"a.>.b", F, F, T, F},
		{">.a", F, F, T, F},
		{"a.**", T, T, T, T}, // wildcards only count as whole tokens
		{"a.>b", T, T, T, T},
		{"a*b", T, T, T, T},
		{"a>", T, T, T, T},
		{"foo.bar", T, T, T, T},
		{"_INBOX.abc.1", T, T, T, T},
		{"$JS.API.INFO", T, T, T, T},
		{"a-b_c.d~e", T, T, T, T},
		{strings.Repeat("a.", 100) + "z", T, T, T, T},
	}
	check := func(what, s string, err error, want bool, sentinel error) {
		t.Helper()
		if want != (err == nil) {
			t.Errorf("%s(%q) = %v, want ok=%v", what, s, err, want)
			return
		}
		if err != nil && !errors.Is(err, sentinel) {
			t.Errorf("%s(%q) = %v, want %v", what, s, err, sentinel)
		}
	}
	for _, c := range cases {
		check("ValidatePublishSubject", c.s, ValidatePublishSubject(c.s), c.pub, ErrBadSubject)
		check("ValidateSubscribeSubject", c.s, ValidateSubscribeSubject(c.s), c.sub, ErrBadSubject)
		check("ValidateQueue", c.s, ValidateQueue(c.s), c.queue, ErrBadQueue)
		if got := IsLiteral(c.s); got != c.lit {
			t.Errorf("IsLiteral(%q) = %v, want %v", c.s, got, c.lit)
		}
		// A valid publish subject is always a valid filter, and literal.
		if c.pub && (!c.sub || !c.lit) {
			t.Errorf("%q: table inconsistent: publishable but not subscribable or literal", c.s)
		}
	}
}

// refValidSubject is the rule of validSubject written the slow, obvious way.
func refValidSubject(s string, wildcards bool) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	toks := strings.Split(s, ".")
	for i, t := range toks {
		if t == "" {
			return false
		}
		if strings.ContainsFunc(t, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return false
		}
		if (t == "*" || t == ">") && !wildcards {
			return false
		}
		if t == ">" && i != len(toks)-1 {
			return false
		}
	}
	return true
}

func TestValidSubjectMatchesReference(t *testing.T) {
	alphabet := []string{"a", "Z", "9", ".", "*", ">", " ", "\t", "\r", "\n", "\x00", "\x7f", "é", "\xff", "\xc3", "$", "-"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		for _, w := range []bool{false, true} {
			if got, want := validSubject(s, w), refValidSubject(s, w); got != want {
				t.Fatalf("validSubject(%q, %v) = %v, want %v", s, w, got, want)
			}
		}
	}
}

// TestPlainSubjectAgreesWithByteLoop checks the 8-bytes-at-a-time fast path
// against the byte loop on every subject of 8 to 12 bytes over an alphabet
// that exercises token boundaries, word boundaries and wildcards, and on
// random subjects with every byte class.
func TestPlainSubjectAgreesWithByteLoop(t *testing.T) {
	check := func(s string) {
		t.Helper()
		fast := plainSubject(s)
		for _, wc := range []bool{false, true} {
			if fast && !checkSubject(s, wc) {
				t.Fatalf("plainSubject(%q) = true, byte loop (wildcards=%v) rejects it", s, wc)
			}
		}
		plain := true
		for i := 0; i < len(s); i++ {
			if c := s[i]; c <= ' ' || c >= 0x7f || c == '*' || c == '>' {
				plain = false
			}
		}
		if plain && fast != checkSubject(s, false) {
			t.Fatalf("plainSubject(%q) = %v, byte loop says %v", s, fast, !fast)
		}
	}
	alphabet := []byte("a.*")
	for n := 8; n <= 12; n++ {
		b := make([]byte, n)
		total := 1
		for range n {
			total *= len(alphabet)
		}
		for k := range total {
			for i, v := 0, k; i < n; i, v = i+1, v/len(alphabet) {
				b[i] = alphabet[v%len(alphabet)]
			}
			check(string(b))
		}
	}
	classes := []byte("ab.*> \t\x7f\x80\xc3\xa9\x00")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		b := make([]byte, 8+rng.IntN(33))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = classes[rng.IntN(len(classes))]
			} else {
				b[i] = 'a' + byte(rng.IntN(26))
			}
		}
		check(string(b))
	}
}
