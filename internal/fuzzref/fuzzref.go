// Package fuzzref holds reference readers of what a NATS server sends,
// written from the protocol's documentation rather than from natsio's
// parsers, for the fuzz targets of natsio's packages to compare those
// parsers with. It is test support: nothing outside tests imports it.
package fuzzref

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/natsio/natsio/proto"
)

// ValidSubject: not empty, valid UTF-8, no byte at or below ' ' and no
// DEL, no empty token; with wildcards "*" may be any whole token and ">"
// the last one, without them neither may appear as a token.
func ValidSubject(s string, wildcards bool) bool {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return false
	}
	tokens := strings.Split(s, ".")
	for i, tok := range tokens {
		switch tok {
		case "":
			return false
		case "*":
			if !wildcards {
				return false
			}
		case ">":
			if !wildcards || i != len(tokens)-1 {
				return false
			}
		}
	}
	return true
}

// IsLiteral: no token is "*" or ">".
func IsLiteral(s string) bool {
	for _, tok := range strings.Split(s, ".") {
		if tok == "*" || tok == ">" {
			return false
		}
	}
	return true
}

// ValidKey: a non-empty RFC 7230 token.
func ValidKey(k string) bool {
	const tchar = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !strings.Contains(tchar, k[i:i+1]) {
			return false
		}
	}
	return true
}

// BlockLines splits a block that starts with "NATS/1.0" and ends with
// "\r\n\r\n" into its status line and header lines; ok is false otherwise.
func BlockLines(b []byte) (status string, lines []string, ok bool) {
	s := string(b)
	if !strings.HasPrefix(s, "NATS/1.0") || !strings.HasSuffix(s, "\r\n\r\n") {
		return "", nil, false
	}
	all := strings.Split(strings.TrimSuffix(s, "\r\n\r\n"), "\r\n")
	return all[0], all[1:], true
}

// StatusLine reads "NATS/1.0", "NATS/1.0 ddd" or "NATS/1.0 ddd text"
// (any number of spaces before the code). valid is false for anything else.
func StatusLine(l string) (code int, desc string, valid bool) {
	rest, ok := strings.CutPrefix(l, "NATS/1.0")
	switch {
	case !ok || strings.Contains(rest, "\n"):
		return 0, "", false
	case rest == "":
		return 0, "", true
	case rest[0] != ' ':
		return 0, "", false
	}
	rest = strings.TrimLeft(rest, " ")
	if len(rest) < 3 || (len(rest) > 3 && rest[3] != ' ') {
		return 0, "", false
	}
	code, err := strconv.Atoi(rest[:3])
	if err != nil || strings.ContainsAny(rest[:3], "+-") {
		return 0, "", false
	}
	return code, strings.TrimSpace(rest[3:]), true
}

// ValidBlock: empty, or the status line, "Key: Value" lines with token
// keys and values without CR or LF, and the empty line at the very end.
func ValidBlock(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	status, lines, ok := BlockLines(b)
	if !ok {
		return false
	}
	if _, _, ok := StatusLine(status); !ok {
		return false
	}
	for _, l := range lines {
		k, v, found := strings.Cut(l, ":")
		if !found || !ValidKey(k) || strings.ContainsAny(v, "\r\n") {
			return false
		}
	}
	return true
}

// Status: the code and trimmed description of the block's first line
// (up to the first CRLF) when that is a status line with a code; 0 and ""
// otherwise.
func Status(b []byte) (int, string) {
	first, _, ok := strings.Cut(string(b), "\r\n")
	if !ok {
		return 0, ""
	}
	code, desc, _ := StatusLine(first)
	return code, desc
}

// Fields: the keys and values (trimmed of spaces and tabs) of a valid
// block.
func Fields(b []byte) [][2]string {
	_, lines, _ := BlockLines(b)
	var out [][2]string
	for _, l := range lines {
		k, v, _ := strings.Cut(l, ":")
		out = append(out, [2]string{k, strings.Trim(v, " \t")})
	}
	return out
}

// Uint parses a sid or a max: a uint64 in decimal digits.
func Uint(s string) (uint64, bool) {
	if strings.HasPrefix(s, "+") {
		return 0, false
	}
	if len(s) > 20 {
		// The protocol's numbers have at most 20 digits, leading zeros
		// included (proto.ParseUint).
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// NUID: 22 characters of 0-9, A-Z and a-z (github.com/nats-io/nuid).
func NUID(s string) bool {
	if len(s) != 22 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z') {
			return false
		}
	}
	return true
}

// LastOf returns the index of the last field of key in fields, or -1.
func LastOf(fields [][2]string, key string) int {
	for i := len(fields) - 1; i >= 0; i-- {
		if fields[i][0] == key {
			return i
		}
	}
	return -1
}

// ResultFields returns the fields of a parser's result header, checking
// that the header is one the connection could have delivered.
func ResultFields(t testing.TB, h *proto.Header) [][2]string {
	t.Helper()
	b := h.Block()
	if len(b) == 0 {
		return nil
	}
	if err := proto.ValidateHeaderBlock(b); err != nil {
		t.Fatalf("result header %q: %v", b, err)
	}
	return Fields(b)
}

// SameFields reports whether two field lists are equal, empty ones alike.
func SameFields(a, b [][2]string) bool {
	return slices.Equal(a, b) || len(a) == 0 && len(b) == 0
}

// MaxInput bounds what a fuzz target feeds to a parser: large enough for
// any structure, small enough to keep each run fast.
const MaxInput = 64 << 10

// DirectKeys are the fields the server appends to a Direct Get reply
// after the stored message's own header; BatchKeys adds those of a batch
// reply.
var (
	DirectKeys = []string{"Nats-Stream", "Nats-Subject", "Nats-Sequence", "Nats-Time-Stamp"}
	BatchKeys  = append(slices.Clone(DirectKeys), "Nats-Num-Pending", "Nats-Last-Sequence")
)

// DeliverableBlock cuts block to MaxInput and reports whether the
// connection would deliver a message with it (proto.ValidateHeaderBlock
// accepts it, or it is empty); it fails t when the reference disagrees.
func DeliverableBlock(t testing.TB, block []byte) ([]byte, bool) {
	t.Helper()
	if len(block) > MaxInput {
		block = block[:MaxInput]
	}
	if len(block) > 0 && proto.ValidateHeaderBlock(block) != nil {
		return block, false
	}
	if !ValidBlock(block) {
		t.Fatalf("block %q: ValidateHeaderBlock accepts it, the reference does not", block)
	}
	return block, true
}
