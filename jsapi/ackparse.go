package jsapi

import (
	"errors"
	"math/bits"
	"strings"
	"time"

	"github.com/natsio/natsio/proto"
)

// ErrBadAckSubject reports a $JS.ACK subject of an unknown layout or with a
// malformed number.
var ErrBadAckSubject = errors.New("jsapi: malformed $JS.ACK subject")

// ParseAckSubject decodes a $JS.ACK reply subject in either layout:
//
//	v1 (9 tokens):   $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>
//	v2 (11+ tokens): $JS.ACK.<domain|_>.<acc hash>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>[.…]
//
// Tokens after the 11th of a v2 subject are ignored (the server reserves
// them for extensions). 10 tokens, or fewer than 9, are ErrBadAckSubject.
// Numbers have at most 20 digits (leading zeros included) and are checked
// for overflow. The strings of the result are views
// into s; nothing is allocated.
func ParseAckSubject(s string) (Metadata, error) {
	var md Metadata
	if parseAckFast(s, &md) {
		return md, nil
	}
	return parseAckTokens(s)
}

const ackPrefix = "$JS.ACK."

// parseAckFast decodes the layouts the server sends (9 tokens, or exactly
// 11 with non-empty domain and account tokens) without splitting the
// subject: it finds the five numbers from the end, eight bytes at a time,
// and converts them eight digits at a time. It reports false for anything
// else (extension tokens, 20-digit numbers, empty tokens, malformed input),
// which parseAckTokens then decodes or rejects; when it reports true, its
// result is the one parseAckTokens would give.
func parseAckFast(s string, md *Metadata) bool {
	if len(s) <= len(ackPrefix) || s[:len(ackPrefix)] != ackPrefix {
		return false
	}
	var nums [5]uint64
	end := len(s)
	for k := len(nums) - 1; k >= 0; k-- {
		start := numberStart(s, end)
		// Every number starts after a dot past the prefix's own, and
		// the stream and consumer names before them are not empty.
		if start <= len(ackPrefix)+1 {
			return false
		}
		v, ok := parseDigits(s, start, end)
		if !ok {
			return false
		}
		nums[k] = v
		end = start - 1 // the dot
	}
	if nums[3] > 1<<63-1 {
		return false
	}
	mid := s[len(ackPrefix):end] // "<stream>.<consumer>" or "<domain>.<hash>.<stream>.<consumer>"
	d1 := strings.IndexByte(mid, '.')
	if d1 <= 0 {
		return false
	}
	rest := mid[d1+1:]
	d2 := strings.IndexByte(rest, '.')
	switch {
	case d2 < 0: // v1
		if rest == "" {
			return false
		}
		md.Stream, md.Consumer = mid[:d1], rest
	default: // v2: exactly two more non-empty tokens
		stream := rest[d2+1:]
		d3 := strings.IndexByte(stream, '.')
		if d2 == 0 || d3 <= 0 || d3 == len(stream)-1 || strings.IndexByte(stream[d3+1:], '.') >= 0 {
			return false
		}
		if dom := mid[:d1]; dom != "_" {
			md.Domain = dom
		}
		md.Stream, md.Consumer = stream[:d3], stream[d3+1:]
	}
	md.NumDelivered, md.StreamSeq, md.ConsumerSeq = nums[0], nums[1], nums[2]
	md.Timestamp = time.Unix(0, int64(nums[3]))
	md.NumPending = nums[4]
	return true
}

// Words of eight equal bytes for the eight-at-a-time scans.
const (
	bytesOf0x7f = 0x7f7f7f7f7f7f7f7f
	bytesOfDot  = 0x2e2e2e2e2e2e2e2e
	bytesOfZero = 0x3030303030303030 // '0'
	bytesOf0xf0 = 0xf0f0f0f0f0f0f0f0
	bytesOf6    = 0x0606060606060606
	bytesOf3    = 0x3333333333333333
)

// load8 returns s[i:i+8] as a little-endian word: s[i] in the low byte.
func load8(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// lastDot returns the index within w (a load8 word) of its last '.', or -1.
// Each byte is tested on its own, so no carry between bytes can make a
// false match.
func lastDot(w uint64) int {
	x := w ^ bytesOfDot // zero where w holds '.'
	z := ^((x&bytesOf0x7f + bytesOf0x7f) | x | bytesOf0x7f)
	if z == 0 {
		return -1
	}
	return (63 - bits.LeadingZeros64(z)) >> 3
}

// numberStart returns the index after the last '.' before end, looking at
// most 24 bytes back, or -1: the number would be longer than any of
// parseDigits', or the subject too short to look back that far.
func numberStart(s string, end int) int {
	for lo := end - 8; lo >= end-24; lo -= 8 {
		if lo < 0 {
			return -1
		}
		if d := lastDot(load8(s, lo)); d >= 0 {
			return lo + d + 1
		}
	}
	return -1
}

// digits8 converts a word of eight ASCII digits (the first in the low
// byte) to its value; ok is false when a byte is not a digit.
func digits8(w uint64) (v uint64, ok bool) {
	// A byte is a digit when its high nibble is 3 and stays 3 with 6
	// added (0x3a–0x3f become 0x40–0x45; only bytes from 0xfa, already
	// rejected by the first test, could carry into the next byte).
	if (w&bytesOf0xf0)|((w+bytesOf6)&bytesOf0xf0)>>4 != bytesOf3 {
		return 0, false
	}
	w -= bytesOfZero
	w = w*10 + w>>8 // byte 2i: the two-digit pair starting at digit 2i
	const (
		mask = 0x000000ff000000ff
		mul1 = 100 + 1000000<<32 // pairs 0 and 2
		mul2 = 1 + 10000<<32     // pairs 1 and 3
	)
	return ((w&mask)*mul1 + (w>>16&mask)*mul2) >> 32, true
}

// parseDigits converts s[start:end], 1 to 19 decimal digits, to its value
// (19 digits cannot overflow). start must be at least 7: the first
// word read may begin up to seven bytes before it.
func parseDigits(s string, start, end int) (uint64, bool) {
	n := end - start
	if n <= 0 || n > 19 {
		return 0, false
	}
	head := n - (n-1)/8*8 // 1–8 digits, then whole words
	w := load8(s, start+head-8)
	if head < 8 { // the bytes before the number read as zeros
		m := uint64(1)<<(8*(8-head)) - 1
		w = w&^m | bytesOfZero&m
	}
	v, ok := digits8(w)
	for i := start + head; i < end; i += 8 {
		d, dok := digits8(load8(s, i))
		v, ok = v*100000000+d, ok && dok
	}
	return v, ok
}

// parseAckTokens decodes any layout ParseAckSubject accepts. It splits at
// most 11 tokens; whatever follows the 11th is extension room the server
// leaves for v2 (it subscribes to "….<consumer>.*.*.*.*.>" and 2.15.2
// emits exactly 11 tokens; the 12th "random" token nats.go mentions is not
// sent): it is ignored, provided it is made of non-empty tokens.
func parseAckTokens(s string) (Metadata, error) {
	var md Metadata
	var tok [11]string
	n, rest, more := 0, s, true
	for more && n < len(tok) {
		tok[n], rest, more = strings.Cut(rest, ".")
		n++
	}
	if more && (rest == "" || rest[0] == '.' || rest[len(rest)-1] == '.' || strings.Contains(rest, "..")) {
		return md, ErrBadAckSubject // an empty extra token: not a subject
	}
	if n < 9 || tok[0] != "$JS" || tok[1] != "ACK" {
		return md, ErrBadAckSubject
	}
	var t []string
	switch {
	case n == 9:
		t = tok[2:9]
	case n >= 11:
		if tok[2] != "_" {
			md.Domain = tok[2]
		}
		t = tok[4:11]
	default:
		return md, ErrBadAckSubject
	}
	md.Stream, md.Consumer = t[0], t[1]
	var nums [5]uint64
	for i := range nums {
		v, ok := proto.ParseUint(t[2+i])
		if !ok {
			return Metadata{}, ErrBadAckSubject
		}
		nums[i] = v
	}
	if md.Stream == "" || md.Consumer == "" || nums[3] > 1<<63-1 {
		return Metadata{}, ErrBadAckSubject
	}
	md.NumDelivered, md.StreamSeq, md.ConsumerSeq = nums[0], nums[1], nums[2]
	md.Timestamp = time.Unix(0, int64(nums[3]))
	md.NumPending = nums[4]
	return md, nil
}
