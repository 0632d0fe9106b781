package clients

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Minimal NATS protocol framing for the raw client: just enough to encode
// PUB/SUB frames ahead of time and to read MSG frames without a client
// library.

// AppendPub appends "PUB <subject> [reply] <len>\r\n<payload>\r\n".
func AppendPub[S, R ~string | ~[]byte](dst []byte, subject S, reply R, payload []byte) []byte {
	dst = append(dst, "PUB "...)
	dst = append(dst, subject...)
	dst = append(dst, ' ')
	if len(reply) > 0 {
		dst = append(dst, reply...)
		dst = append(dst, ' ')
	}
	dst = strconv.AppendInt(dst, int64(len(payload)), 10)
	dst = append(dst, "\r\n"...)
	dst = append(dst, payload...)
	return append(dst, "\r\n"...)
}

// AppendHPub appends "HPUB <subject> [reply] <hdrlen> <total>\r\n<hdr><payload>\r\n";
// hdr is a complete header block ("NATS/1.0\r\n…\r\n\r\n").
func AppendHPub(dst []byte, subject, reply string, hdr, payload []byte) []byte {
	dst = append(dst, "HPUB "...)
	dst = append(dst, subject...)
	dst = append(dst, ' ')
	if reply != "" {
		dst = append(dst, reply...)
		dst = append(dst, ' ')
	}
	dst = strconv.AppendInt(dst, int64(len(hdr)), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(len(hdr)+len(payload)), 10)
	dst = append(dst, "\r\n"...)
	dst = append(dst, hdr...)
	dst = append(dst, payload...)
	return append(dst, "\r\n"...)
}

// AppendSub appends "SUB <subject> <sid>\r\n".
func AppendSub(dst []byte, subject string, sid int) []byte {
	dst = append(dst, "SUB "...)
	dst = append(dst, subject...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(sid), 10)
	return append(dst, "\r\n"...)
}

// PubBatch returns k copies of one PUB frame, with k the smallest count for
// which the batch holds at least minBytes, and the length of one frame.
func PubBatch(subject string, payload []byte, minBytes int) (batch []byte, frameLen, k int) {
	frame := AppendPub(nil, subject, "", payload)
	frameLen = len(frame)
	k = max(1, (minBytes+frameLen-1)/frameLen)
	batch = bytes.Repeat(frame, k)
	return batch, frameLen, k
}

// OpKind is the kind of a frame read from the server.
type OpKind uint8

// Frame kinds.
const (
	OpMsg OpKind = iota + 1
	OpHMsg
	OpPing
	OpPong
	OpOK
	OpErr
	OpInfo
)

// Op is one frame read from the server. Reply (for MSG/HMSG) is copied
// into the buffer passed to Next, so it stays valid after Next returns;
// Text (for -ERR and INFO) and Data (NextData only) are only valid until
// the next call.
type Op struct {
	Kind   OpKind
	SID    uint64
	Reply  []byte
	Size   int // payload bytes, headers included for HMSG
	HdrLen int // HMSG: bytes of the header block (0 for MSG)
	Text   []byte
	// Data is the whole payload (header block included for HMSG), set by
	// NextData when it fits the read buffer.
	Data []byte
}

// ErrProtocol reports a frame the raw reader does not understand.
var ErrProtocol = errors.New("raw: protocol error")

// Reader reads server frames from a buffered stream. MSG payloads are
// checked for their trailing CRLF and skipped, not returned.
type Reader struct {
	br *bufio.Reader
}

// NewReader reads from r with a buffer of size bytes.
func NewReader(r io.Reader, size int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, size)}
}

// Next reads the next frame. For MSG and HMSG the reply subject, if any, is
// appended to reply[:0] and returned in Op.Reply.
func (r *Reader) Next(reply []byte) (Op, error) { return r.next(reply, false) }

// NextData is Next that also returns the payload of MSG and HMSG frames in
// Op.Data (valid until the next call), for the JetStream scenarios that
// must look at acks, statuses and API replies.
func (r *Reader) NextData(reply []byte) (Op, error) { return r.next(reply, true) }

func (r *Reader) next(reply []byte, keep bool) (Op, error) {
	line, err := r.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return Op{}, fmt.Errorf("%w: control line longer than %d bytes", ErrProtocol, r.br.Size())
		}
		return Op{}, err
	}
	line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
	switch {
	case bytes.HasPrefix(line, []byte("MSG ")):
		return r.msg(line[4:], reply, false, keep)
	case bytes.HasPrefix(line, []byte("HMSG ")):
		return r.msg(line[5:], reply, true, keep)
	case bytes.Equal(line, []byte("PING")):
		return Op{Kind: OpPing}, nil
	case bytes.Equal(line, []byte("PONG")):
		return Op{Kind: OpPong}, nil
	case bytes.Equal(line, []byte("+OK")):
		return Op{Kind: OpOK}, nil
	case bytes.HasPrefix(line, []byte("-ERR")):
		return Op{Kind: OpErr, Text: bytes.TrimSpace(line[4:])}, nil
	case bytes.HasPrefix(line, []byte("INFO ")):
		return Op{Kind: OpInfo, Text: line[5:]}, nil
	}
	return Op{}, fmt.Errorf("%w: unexpected line %q", ErrProtocol, line)
}

// msg parses "<subject> <sid> [reply] <size>" (MSG) or "<subject> <sid>
// [reply] <hdr> <size>" (HMSG), then skips the payload (keeping a view of
// it in Op.Data when keep is set and it fits the buffer).
func (r *Reader) msg(args, reply []byte, hdr, keep bool) (Op, error) {
	var f [5][]byte
	n := 0
	for len(args) > 0 {
		i := bytes.IndexByte(args, ' ')
		if i == 0 {
			args = args[1:]
			continue
		}
		if n == len(f) {
			return Op{}, fmt.Errorf("%w: too many MSG arguments", ErrProtocol)
		}
		if i < 0 {
			f[n], args = args, nil
		} else {
			f[n], args = args[:i], args[i+1:]
		}
		n++
	}
	min, maxN := 3, 4
	if hdr {
		min, maxN = 4, 5
	}
	if n < min || n > maxN {
		return Op{}, fmt.Errorf("%w: %d MSG arguments", ErrProtocol, n)
	}
	op := Op{Kind: OpMsg}
	if hdr {
		op.Kind = OpHMsg
	}
	sid, ok := parseUint(f[1])
	size, ok2 := parseUint(f[n-1])
	if !ok || !ok2 {
		return Op{}, fmt.Errorf("%w: bad MSG numbers", ErrProtocol)
	}
	op.SID, op.Size = sid, int(size)
	if hdr {
		h, ok := parseUint(f[n-2])
		if !ok || h > size {
			return Op{}, fmt.Errorf("%w: bad HMSG header size", ErrProtocol)
		}
		op.HdrLen = int(h)
	}
	if n == maxN {
		op.Reply = append(reply[:0], f[2]...)
	}
	// The payload and its CRLF.
	total := op.Size + 2
	if total <= r.br.Size() {
		b, err := r.br.Peek(total)
		if err != nil {
			return Op{}, err
		}
		if b[op.Size] != '\r' || b[op.Size+1] != '\n' {
			return Op{}, fmt.Errorf("%w: payload not followed by CRLF", ErrProtocol)
		}
		if keep {
			// Discard only advances the read index: the bytes stay in
			// the buffer until the next read fills it.
			op.Data = b[:op.Size]
		}
	}
	if _, err := r.br.Discard(total); err != nil {
		return Op{}, err
	}
	return op, nil
}

func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// jsonUint returns the unsigned integer value of the first "key": member of
// a flat JSON object such as a PubAck ({"stream":"S","seq":42}), without
// decoding the rest. The raw client uses it to check acks.
func jsonUint(b []byte, key string) (uint64, bool) {
	var pat [32]byte
	p := append(append(append(pat[:0], '"'), key...), '"', ':')
	i := bytes.Index(b, p)
	if i < 0 {
		return 0, false
	}
	b = b[i+len(p):]
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	j := 0
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	return parseUint(b[:j])
}
