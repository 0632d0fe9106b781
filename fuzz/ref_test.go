package fuzz

import (
	"strconv"
	"strings"

	"github.com/natsio/natsio/internal/fuzzref"
	"github.com/natsio/natsio/proto"
)

// refParse is the reference parser of FuzzParserDifferential. It reads a
// whole stream with plain string functions, following the grammar that
// proto documents, and reports the same outcome as parse: the ops up to the
// first error, the error's sentinel name, and whether the stream ended
// inside an op.
//
// Grammar (names case-insensitive, blanks are ' ' and '\t'):
//
//	op        = name (blank args | [blanks] ) LF   with name in the side's set
//	args      = the bytes up to LF, one trailing CR dropped
//	PING, PONG, +OK: only blanks and CRs before LF
//	INFO, CONNECT: the JSON, trimmed, not empty
//	-ERR:      the text, trimmed, one pair of surrounding single quotes dropped
//	MSG   subject sid [reply] size
//	HMSG  subject sid [reply] hdr_size total_size
//	PUB   subject [reply] size
//	HPUB  subject [reply] hdr_size total_size
//	SUB   subject [queue] sid
//	UNSUB sid [max]
//	a message's control line is followed by total_size bytes and CR LF.
//
// Numbers are decimal digits only; sids and max are uint64 without
// overflow, sizes have at most 18 digits and are at most MaxPayload; a
// header size is 0 or 12 ("NATS/1.0\r\n\r\n") to total_size. The argument
// line (everything after the op name and its one separator, up to LF) is
// at most MaxControlLine bytes, MaxInfoLine for INFO and CONNECT.
//
// Error precedence follows proto where one input has two faults: the line
// length first, then the number of arguments, the sid, the total size, the
// header size, and last the relation of the two sizes.
func refParse(in []byte, client bool, lim proto.Limits) outcome {
	s := string(in)
	var out outcome
	for s != "" {
		op, rest, err := refOne(s, client, lim)
		switch {
		case err == errIncomplete:
			out.buffered = true
			return out
		case err != "":
			out.err = err
			return out
		}
		out.add(&op)
		s = rest
	}
	return out
}

// errIncomplete is refOne's answer for a stream that ends inside an op.
const errIncomplete = "incomplete"

type refName struct {
	name string
	kind proto.Kind
	args bool
}

var (
	refServerNames = []refName{
		{"INFO", proto.KindInfo, true}, {"MSG", proto.KindMsg, true}, {"HMSG", proto.KindHMsg, true},
		{"PING", proto.KindPing, false}, {"PONG", proto.KindPong, false},
		{"+OK", proto.KindOK, false}, {"-ERR", proto.KindErr, true},
	}
	refClientNames = []refName{
		{"CONNECT", proto.KindConnect, true}, {"PUB", proto.KindPub, true}, {"HPUB", proto.KindHPub, true},
		{"SUB", proto.KindSub, true}, {"UNSUB", proto.KindUnsub, true},
		{"PING", proto.KindPing, false}, {"PONG", proto.KindPong, false},
	}
)

// asciiUpper upper-cases ASCII letters only, byte for byte.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func isBlank(r rune) bool { return r == ' ' || r == '\t' }

// refOne parses the op at the start of s. It returns the op and the rest of
// the stream, or a sentinel name, or errIncomplete.
func refOne(s string, client bool, lim proto.Limits) (op proto.Op, rest string, err string) {
	names := refServerNames
	if client {
		names = refClientNames
	}
	head := asciiUpper(s[:min(len(s), 8)])
	var name *refName
	for i := range names {
		if strings.HasPrefix(head, names[i].name) {
			name = &names[i]
		}
	}
	if name == nil {
		for _, n := range names {
			if len(head) < len(n.name) && strings.HasPrefix(n.name, head) {
				return op, "", errIncomplete
			}
		}
		return op, "", "ErrUnknownOp"
	}
	op.Kind = name.kind
	s = s[len(name.name):]
	if s == "" {
		return op, "", errIncomplete
	}

	if !name.args {
		if !strings.ContainsRune(" \t\r\n", rune(s[0])) {
			return op, "", "ErrUnknownOp"
		}
		i := strings.IndexFunc(s, func(r rune) bool { return r != ' ' && r != '\t' && r != '\r' })
		switch {
		case i < 0:
			return op, "", errIncomplete
		case s[i] != '\n':
			return op, "", "ErrArgs"
		}
		return op, s[i+1:], ""
	}

	switch s[0] {
	case ' ', '\t':
	case '\r', '\n':
		return op, "", "ErrArgs"
	default:
		return op, "", "ErrUnknownOp"
	}
	s = s[1:]
	limit := lim.MaxControlLine
	if limit <= 0 {
		limit = proto.DefaultMaxControlLine
	}
	if op.Kind == proto.KindInfo || op.Kind == proto.KindConnect {
		limit = lim.MaxInfoLine
		if limit <= 0 {
			limit = proto.DefaultMaxInfoLine
		}
	}
	i := strings.IndexByte(s, '\n')
	if i < 0 {
		if len(s) > limit {
			return op, "", "ErrControlLine"
		}
		return op, "", errIncomplete
	}
	if i > limit {
		return op, "", "ErrControlLine"
	}
	line := strings.TrimSuffix(s[:i], "\r")
	rest = s[i+1:]

	switch op.Kind {
	case proto.KindInfo, proto.KindConnect:
		text := strings.TrimSpace(line)
		if text == "" {
			return op, "", "ErrArgs"
		}
		op.Text = []byte(text)
		return op, rest, ""
	case proto.KindErr:
		text := strings.TrimSpace(line)
		if len(text) >= 2 && text[0] == '\'' && text[len(text)-1] == '\'' {
			text = text[1 : len(text)-1]
		}
		op.Text = []byte(text)
		return op, rest, ""
	}

	f := strings.FieldsFunc(line, isBlank)
	// want: the number of arguments without and with the optional one.
	want := map[proto.Kind]int{
		proto.KindMsg: 3, proto.KindHMsg: 4, proto.KindPub: 2, proto.KindHPub: 3,
		proto.KindSub: 2, proto.KindUnsub: 1,
	}[op.Kind]
	if len(f) != want && len(f) != want+1 {
		return op, "", "ErrArgs"
	}
	optional := len(f) == want+1
	var ok bool
	switch op.Kind {
	case proto.KindSub:
		op.Subject = []byte(f[0])
		if optional {
			op.Queue = []byte(f[1])
		}
		if op.SID, ok = fuzzref.Uint(f[len(f)-1]); !ok {
			return op, "", "ErrSize"
		}
		return op, rest, ""
	case proto.KindUnsub:
		if op.SID, ok = fuzzref.Uint(f[0]); !ok {
			return op, "", "ErrSize"
		}
		if optional {
			if op.Max, ok = fuzzref.Uint(f[1]); !ok {
				return op, "", "ErrSize"
			}
		}
		return op, rest, ""
	case proto.KindMsg, proto.KindHMsg:
		op.Subject = []byte(f[0])
		if op.SID, ok = fuzzref.Uint(f[1]); !ok {
			return op, "", "ErrSize"
		}
		if optional {
			op.Reply = []byte(f[2])
		}
	case proto.KindPub, proto.KindHPub:
		op.Subject = []byte(f[0])
		if optional {
			op.Reply = []byte(f[1])
		}
	}

	max := lim.MaxPayload
	if max <= 0 {
		max = proto.DefaultMaxPayload
	}
	total, err := refSize(f[len(f)-1], max)
	if err != "" {
		return op, "", err
	}
	hdr := 0
	if op.Kind == proto.KindHMsg || op.Kind == proto.KindHPub {
		if hdr, err = refSize(f[len(f)-2], max); err != "" {
			return op, "", err
		}
		if hdr > total || (hdr != 0 && hdr < len("NATS/1.0\r\n\r\n")) {
			return op, "", "ErrHeaderSize"
		}
	}

	if len(rest) < total+2 {
		if len(rest) == total+1 && rest[total] != '\r' {
			return op, "", "ErrMissingCRLF"
		}
		return op, "", errIncomplete
	}
	if rest[total:total+2] != "\r\n" {
		return op, "", "ErrMissingCRLF"
	}
	if hdr > 0 {
		op.Header = []byte(rest[:hdr])
	}
	op.Payload = []byte(rest[hdr:total])
	return op, rest[total+2:], ""
}

// refSize parses a size: at most 18 decimal digits, at most max.
func refSize(s string, max int) (int, string) {
	if len(s) > 18 || strings.HasPrefix(s, "+") {
		return 0, "ErrSize"
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, "ErrSize"
	}
	if n > uint64(max) {
		return 0, "ErrPayloadTooLarge"
	}
	return int(n), ""
}
