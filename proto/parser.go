package proto

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Parser states.
const (
	stStart       uint8 = iota // expecting the first byte of an op name
	stSecond                   // first byte seen; the second decides the op
	stName                     // matching the rest of p.name
	stAfterName                // op name complete; one separator or EOL expected
	stEOL                      // argument-less op: blanks, then '\n'
	stArgs                     // collecting the argument line up to '\n'
	stPayload                  // message payload, not yet started
	stPayloadCopy              // payload spans chunks; copying into p.dst
	stCR                       // expecting the '\r' after a payload
	stLF                       // expecting the '\n' after a payload
)

// scratchKeep is the largest control-line scratch buffer kept between ops;
// a larger one (after a big INFO) is released.
const scratchKeep = 64 << 10

// Parser is an incremental, zero-copy parser of NATS protocol operations.
// The zero value parses what a server sends, with default Limits. Set
// ClientOps to parse what a client sends instead.
//
// Usage: Feed a chunk, then call Next until it returns (nil, nil), then Feed
// the next chunk:
//
//	p.Feed(buf[:n])
//	for {
//		op, err := p.Next()
//		if err != nil { /* protocol error: drop the connection */ }
//		if op == nil { break } // chunk consumed; read more
//		// use op: valid until the next call to Next or Feed
//	}
//
// A Parser is not safe for concurrent use.
type Parser struct {
	// Limits bound control lines and message sizes. They may be changed
	// between ops (a connection raises MaxPayload when INFO arrives).
	Limits Limits
	// ClientOps selects the client's operations (CONNECT, PUB, HPUB, SUB,
	// UNSUB, PING, PONG) instead of the server's.
	ClientOps bool
	// Alloc, if set, provides the memory for a message whose header and
	// payload span chunks; it must return a slice of length n that the
	// parser may fill and then hand to the caller (Op.Owned). The default
	// is make([]byte, n).
	Alloc func(n int) []byte

	buf []byte // current chunk
	pos int    // next unread byte of buf
	off int64  // stream bytes consumed before buf

	state  uint8
	first  byte   // first byte of the op name, upper-cased
	name   string // op name being matched (upper case)
	nameAt int    // bytes of name matched
	kind   Kind
	line   []byte // control line scratch when a line spans chunks
	hdr    int    // header size of the pending message
	size   int    // total size of the pending message
	dst    []byte // destination of a payload that spans chunks
	got    int    // bytes of dst filled
	op     Op
	// starts and ends delimit the fields of the argument line (offsets, not
	// slices: storing slices in the parser costs a write barrier each while
	// the garbage collector runs).
	starts, ends [maxFields]int
	cur          []byte // the argument line of the pending op
	// inScratch: cur is p.line, not a view of the chunk.
	inScratch bool
	replyAt   int // field index of the reply subject
}

// Feed hands the parser the next chunk of the stream. Call it first, and
// again each time Next has returned (nil, nil) or an error; bytes of an
// earlier chunk that Next did not consume are dropped. The parser keeps b
// until Next has consumed it; the caller must not modify b before then.
func (p *Parser) Feed(b []byte) {
	p.off += int64(p.pos)
	p.buf = b
	p.pos = 0
}

// Reset returns the parser to the start of a new stream, keeping Limits,
// ClientOps and Alloc.
func (p *Parser) Reset() {
	p.buf, p.pos, p.off = nil, 0, 0
	p.resetOp()
}

func (p *Parser) resetOp() {
	p.state = stStart
	p.name, p.nameAt = "", 0
	p.kind = KindNone
	if cap(p.line) > scratchKeep {
		p.line = nil
	}
	p.line = p.line[:0]
	p.hdr, p.size, p.dst, p.got = 0, 0, nil, 0
	p.cur, p.inScratch, p.replyAt = nil, false, 0
}

// Buffered reports whether the parser is in the middle of an operation,
// that is, whether bytes of an incomplete op have been consumed.
func (p *Parser) Buffered() bool { return p.state != stStart }

// Offset reports how many bytes of the stream the parser has consumed.
func (p *Parser) Offset() int64 { return p.off + int64(p.pos) }

// fail resets the parser, discards the rest of the chunk and returns a
// *Error for sentinel err, quoting near.
func (p *Parser) fail(err error, near []byte) (*Op, error) {
	e := &Error{Err: err, Offset: p.Offset(), Near: Excerpt(near)}
	p.resetOp()
	p.pos = len(p.buf)
	return nil, e
}

// Next returns the next complete operation from the bytes fed so far, or
// (nil, nil) when they hold none and the parser wants another chunk. The Op
// and its slices are valid until the next call to Next or Feed (see Op.Owned
// for the exception). After an error the parser has reset and dropped the
// rest of the chunk.
func (p *Parser) Next() (*Op, error) {
	for p.pos < len(p.buf) {
		switch p.state {
		case stStart:
			if p.fastMsg() {
				continue
			}
			b := upper(p.buf[p.pos])
			if !p.opStart(b) {
				return p.fail(ErrUnknownOp, p.rest())
			}
			p.first = b
			p.pos++
			p.state = stSecond
		case stSecond:
			if !p.opSecond(upper(p.buf[p.pos])) {
				return p.fail(ErrUnknownOp, p.rest())
			}
			p.pos++
			p.state = stName
			if p.nameAt == len(p.name) {
				p.state = stAfterName
			}
		case stName:
			if upper(p.buf[p.pos]) != p.name[p.nameAt] {
				return p.fail(ErrUnknownOp, p.rest())
			}
			p.pos++
			p.nameAt++
			if p.nameAt == len(p.name) {
				p.state = stAfterName
			}
		case stAfterName:
			b := p.buf[p.pos]
			if hasArgs(p.kind) {
				switch b {
				case ' ', '\t':
					p.pos++
					p.state = stArgs
				case '\r', '\n':
					return p.fail(ErrArgs, p.rest())
				default:
					return p.fail(ErrUnknownOp, p.rest())
				}
				continue
			}
			switch b {
			case ' ', '\t', '\r', '\n':
				p.state = stEOL
			default:
				return p.fail(ErrUnknownOp, p.rest())
			}
		case stEOL:
			switch p.buf[p.pos] {
			case ' ', '\t', '\r':
				p.pos++
			case '\n':
				p.pos++
				op := &p.op
				*op = Op{Kind: p.kind}
				p.resetOp()
				return op, nil
			default:
				return p.fail(ErrArgs, p.rest())
			}
		case stArgs:
			op, err := p.args()
			if op != nil || err != nil {
				return op, err
			}
		case stPayload:
			if op, err := p.payload(); op != nil || err != nil {
				return op, err
			}
		case stPayloadCopy:
			n := copy(p.dst[p.got:], p.buf[p.pos:])
			p.got += n
			p.pos += n
			if p.got == p.size {
				p.state = stCR
			}
		case stCR:
			if p.buf[p.pos] != '\r' {
				return p.fail(ErrMissingCRLF, p.rest())
			}
			p.pos++
			p.state = stLF
		case stLF:
			if p.buf[p.pos] != '\n' {
				return p.fail(ErrMissingCRLF, p.rest())
			}
			p.pos++
			op := &p.op
			if p.size > 0 {
				op.Body = p.dst[:p.size:p.size]
				op.Header = p.dst[:p.hdr:p.hdr]
				op.Payload = p.dst[p.hdr:p.size:p.size]
				op.Owned = true
				if p.hdr == 0 {
					op.Header = nil
				}
			} else {
				op.Body, op.Header, op.Payload = nil, nil, nil
			}
			p.resetOp()
			return op, nil
		}
	}
	if p.state == stPayload {
		// The control line ended this chunk: its views must outlive it.
		p.keepViews(&p.op)
	}
	return nil, nil
}

// rest returns the unread part of the chunk, for error excerpts.
func (p *Parser) rest() []byte { return p.buf[p.pos:] }

func upper(b byte) byte {
	if 'a' <= b && b <= 'z' {
		return b - ('a' - 'A')
	}
	return b
}

func hasArgs(k Kind) bool {
	switch k {
	case KindPing, KindPong, KindOK:
		return false
	}
	return true
}

// opStart reports whether b (upper case) can begin an op of this side.
func (p *Parser) opStart(b byte) bool {
	switch b {
	case 'P':
		return true
	case 'M', 'I', '+', '-':
		return !p.ClientOps
	case 'H':
		return true
	case 'C', 'S', 'U':
		return p.ClientOps
	}
	return false
}

// opSecond picks the op from its first two bytes and sets name, nameAt, kind.
func (p *Parser) opSecond(b byte) bool {
	var name string
	var kind Kind
	switch p.first {
	case 'P':
		switch b {
		case 'I':
			name, kind = "PING", KindPing
		case 'O':
			name, kind = "PONG", KindPong
		case 'U':
			if p.ClientOps {
				name, kind = "PUB", KindPub
			}
		}
	case 'H':
		switch b {
		case 'M':
			if !p.ClientOps {
				name, kind = "HMSG", KindHMsg
			}
		case 'P':
			if p.ClientOps {
				name, kind = "HPUB", KindHPub
			}
		}
	case 'M':
		name, kind = "MSG", KindMsg
	case 'I':
		name, kind = "INFO", KindInfo
	case '+':
		name, kind = "+OK", KindOK
	case '-':
		name, kind = "-ERR", KindErr
	case 'C':
		name, kind = "CONNECT", KindConnect
	case 'S':
		name, kind = "SUB", KindSub
	case 'U':
		name, kind = "UNSUB", KindUnsub
	}
	if name == "" || name[1] != b {
		return false
	}
	p.name, p.nameAt, p.kind = name, 2, kind
	return true
}

// fastMsg recognises "MSG " and "HMSG " in one step when the whole name is
// in the chunk; it is equivalent to the byte-at-a-time states. It reports
// true when it advanced to stArgs.
func (p *Parser) fastMsg() bool {
	if p.ClientOps {
		return false
	}
	b := p.buf[p.pos:]
	if len(b) >= 4 && b[0]|0x20 == 'm' && b[1]|0x20 == 's' && b[2]|0x20 == 'g' && (b[3] == ' ' || b[3] == '\t') {
		p.kind = KindMsg
		p.pos += 4
		p.state = stArgs
		return true
	}
	if len(b) >= 5 && b[0]|0x20 == 'h' && b[1]|0x20 == 'm' && b[2]|0x20 == 's' && b[3]|0x20 == 'g' && (b[4] == ' ' || b[4] == '\t') {
		p.kind = KindHMsg
		p.pos += 5
		p.state = stArgs
		return true
	}
	return false
}

// args collects the argument line. It returns an op for argument-only ops,
// moves to stPayload for messages, or (nil, nil) when the line continues in
// the next chunk.
func (p *Parser) args() (*Op, error) {
	limit := p.Limits.controlLine()
	if p.kind == KindInfo || p.kind == KindConnect {
		limit = p.Limits.infoLine()
	}
	rest := p.buf[p.pos:]
	if len(p.line) == 0 && p.kind != KindInfo && p.kind != KindConnect && p.kind != KindErr {
		// The usual case: the whole line is in this chunk. Split it and
		// find its end in one pass.
		if n, end := p.scanLine(rest); end >= 0 {
			line := rest[:end]
			if end > limit {
				return p.fail(ErrControlLine, line)
			}
			p.pos += end + 1
			p.inScratch = false
			if k := len(line); k > 0 && line[k-1] == '\r' {
				line = line[:k-1]
			}
			if n == 0 {
				return p.fail(ErrArgs, line)
			}
			return p.parseFields(line, n)
		}
	}
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		if len(p.line)+len(rest) > limit {
			return p.fail(ErrControlLine, p.line)
		}
		p.line = append(p.line, rest...)
		p.pos = len(p.buf)
		return nil, nil
	}
	if len(p.line)+i > limit {
		return p.fail(ErrControlLine, rest[:i])
	}
	line := rest[:i]
	p.inScratch = len(p.line) > 0
	if p.inScratch {
		p.line = append(p.line, line...)
		line = p.line
	}
	p.pos += i + 1
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return p.parseArgs(line)
}

// parseArgs interprets a complete argument line for p.kind.
func (p *Parser) parseArgs(line []byte) (*Op, error) {
	op := &p.op
	*op = Op{Kind: p.kind}
	switch p.kind {
	case KindInfo, KindConnect:
		op.Text = bytes.TrimSpace(line)
		if len(op.Text) == 0 {
			return p.fail(ErrArgs, line)
		}
		p.resetOp()
		return op, nil
	case KindErr:
		t := bytes.TrimSpace(line)
		if n := len(t); n >= 2 && t[0] == '\'' && t[n-1] == '\'' {
			t = t[1 : n-1]
		}
		op.Text = t
		p.resetOp()
		return op, nil
	}
	n := p.split(line)
	if n == 0 {
		return p.fail(ErrArgs, line)
	}
	return p.parseFields(line, n)
}

// scanLine splits the argument line at the start of rest into p.starts/ends and
// finds its '\n', in one pass with one comparison per ordinary byte. It
// returns the number of fields and the index of the '\n', or end -1 when the
// line does not end in rest, holds a '\r' that is not the one before '\n',
// or has more fields than maxFields: the general path then decides.
func (p *Parser) scanLine(rest []byte) (n, end int) {
	start := 0
	for i := 0; ; i++ {
		i = nextControl(rest, i)
		if i == len(rest) {
			return 0, -1
		}
		c := rest[i]
		switch c {
		case ' ', '\t':
		case '\r':
			if i+1 == len(rest) || rest[i+1] != '\n' {
				return 0, -1
			}
		case '\n':
		default:
			continue // a control byte inside a field, as split treats it
		}
		if i > start {
			if n == maxFields {
				return 0, -1
			}
			p.starts[n], p.ends[n] = start, i
			n++
		}
		if c == '\r' {
			return n, i + 1
		}
		if c == '\n' {
			return n, i
		}
		start = i + 1
	}
}

// nextControl returns the index of the first byte at or after i that is a
// blank or control byte (at most ' '), or len(b). It tests 8 bytes at a
// time.
func nextControl(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// The lowest flagged byte is exactly the first below 0x21 (bytes
		// above it may be flagged by the borrow, and are not looked at).
		if m := (w - 0x2121212121212121) &^ w & 0x8080808080808080; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		if b[i] <= ' ' {
			return i
		}
	}
	return i
}

// parseFields interprets the nf fields (p.starts, p.ends) of a complete
// argument line of a message, subscription or unsubscription op.
func (p *Parser) parseFields(line []byte, nf int) (*Op, error) {
	var fa [maxFields][]byte
	for i := range nf {
		fa[i] = line[p.starts[i]:p.ends[i]:p.ends[i]]
	}
	f := fa[:nf]
	op := &p.op
	*op = Op{Kind: p.kind}
	p.cur = line
	var err error
	var sizeArgs [][]byte
	switch p.kind {
	case KindMsg, KindHMsg:
		n := 3
		if p.kind == KindHMsg {
			n = 4
		}
		if len(f) != n && len(f) != n+1 {
			return p.fail(ErrArgs, line)
		}
		op.Subject = f[0]
		if op.SID, err = parseUint(f[1]); err != nil {
			return p.fail(err, line)
		}
		if len(f) == n+1 {
			op.Reply, p.replyAt = f[2], 2
		}
		sizeArgs = f[len(f)-(n-2):]
	case KindPub, KindHPub:
		n := 2
		if p.kind == KindHPub {
			n = 3
		}
		if len(f) != n && len(f) != n+1 {
			return p.fail(ErrArgs, line)
		}
		op.Subject = f[0]
		if len(f) == n+1 {
			op.Reply, p.replyAt = f[1], 1
		}
		sizeArgs = f[len(f)-(n-1):]
	case KindSub:
		if len(f) != 2 && len(f) != 3 {
			return p.fail(ErrArgs, line)
		}
		op.Subject = f[0]
		if len(f) == 3 {
			op.Queue = f[1]
		}
		if op.SID, err = parseUint(f[len(f)-1]); err != nil {
			return p.fail(err, line)
		}
		p.resetOp()
		return op, nil
	case KindUnsub:
		if len(f) != 1 && len(f) != 2 {
			return p.fail(ErrArgs, line)
		}
		if op.SID, err = parseUint(f[0]); err != nil {
			return p.fail(err, line)
		}
		if len(f) == 2 {
			if op.Max, err = parseUint(f[1]); err != nil {
				return p.fail(err, line)
			}
		}
		p.resetOp()
		return op, nil
	}
	return p.sizes(op, line, sizeArgs)
}

// sizes checks the size arguments of a message op and moves to stPayload.
func (p *Parser) sizes(op *Op, line []byte, args [][]byte) (*Op, error) {
	max := p.Limits.payload()
	hdr := 0
	total, err := parseSize(args[len(args)-1], max)
	if err != nil {
		return p.fail(err, line)
	}
	if len(args) == 2 {
		if hdr, err = parseSize(args[0], max); err != nil {
			return p.fail(err, line)
		}
		if hdr > total || (hdr > 0 && hdr < minHeaderLen) {
			return p.fail(ErrHeaderSize, line)
		}
	}
	p.hdr, p.size = hdr, total
	p.state = stPayload
	return nil, nil
}

// payload delivers a message whose payload and CRLF are all in the chunk
// without copying, or starts copying one that spans chunks.
func (p *Parser) payload() (*Op, error) {
	op := &p.op
	rest := p.buf[p.pos:]
	if len(rest) >= p.size+2 {
		if rest[p.size] != '\r' || rest[p.size+1] != '\n' {
			p.pos += p.size
			return p.fail(ErrMissingCRLF, p.rest())
		}
		data := rest[:p.size:p.size]
		op.Body = data
		op.Header = data[:p.hdr:p.hdr]
		op.Payload = data[p.hdr:]
		if p.hdr == 0 {
			op.Header = nil
		}
		p.pos += p.size + 2
		p.resetOp()
		return op, nil
	}
	// The message continues in a later chunk: keep the control-line views
	// alive by moving them into the scratch buffer, then copy the payload
	// into memory the caller will own.
	p.keepViews(op)
	p.state = stCR
	if p.size > 0 {
		p.dst = p.alloc(p.size)
		p.state = stPayloadCopy
	}
	return nil, nil
}

// keepViews makes op's control-line views independent of the chunk by
// copying the argument line into the scratch buffer and re-slicing.
func (p *Parser) keepViews(op *Op) {
	if p.inScratch {
		return
	}
	p.line = append(p.line[:0], p.cur...)
	p.inScratch = true
	op.Subject = p.reslice(0, len(op.Subject))
	if len(op.Reply) > 0 {
		op.Reply = p.reslice(p.replyAt, len(op.Reply))
	}
}

func (p *Parser) reslice(field, n int) []byte {
	at := p.starts[field]
	return p.line[at : at+n : at+n]
}

func (p *Parser) alloc(n int) []byte {
	if p.Alloc != nil {
		if b := p.Alloc(n); len(b) >= n {
			return b[:n:n]
		}
	}
	return make([]byte, n)
}

// split cuts line into blank-separated fields (p.starts, p.ends) and
// returns their number: 0 when the line has none or more than maxFields.
// (scanLine is the fast path; this one serves lines that spanned chunks.)
func (p *Parser) split(line []byte) int {
	n, i := 0, 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if n == maxFields {
			return 0
		}
		p.starts[n], p.ends[n] = i, j
		n++
		i = j
	}
	return n
}

// maxFields is the most fields an argument line may have (HMSG with a
// reply has 5).
const maxFields = 6

// maxDigits bounds decimal numbers; more digits than this overflow.
const maxDigits = 18

// parseSize parses a decimal size of at most maxDigits digits and checks it
// against max.
func parseSize(b []byte, max int) (int, error) {
	if len(b) == 0 || len(b) > maxDigits {
		return 0, ErrSize
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, ErrSize
		}
		n = n*10 + int(c-'0')
	}
	if n > max {
		return 0, ErrPayloadTooLarge
	}
	return n, nil
}

// parseUint parses a decimal uint64, rejecting signs, non-digits and
// overflow.
func parseUint[T ~string | ~[]byte](b T) (uint64, error) {
	if len(b) == 0 || len(b) > 20 {
		return 0, ErrSize
	}
	var n uint64
	if len(b) < 20 {
		// 19 digits cannot overflow: no check per digit.
		for i := 0; i < len(b); i++ {
			d := b[i] - '0'
			if d > 9 {
				return 0, ErrSize
			}
			n = n*10 + uint64(d)
		}
		return n, nil
	}
	for i := 0; i < len(b); i++ {
		d := b[i] - '0'
		if d > 9 {
			return 0, ErrSize
		}
		hi, lo := bits.Mul64(n, 10)
		sum, carry := bits.Add64(lo, uint64(d), 0)
		if hi != 0 || carry != 0 {
			return 0, ErrSize
		}
		n = sum
	}
	return n, nil
}

// ParseUint parses a decimal number as the protocol writes them: 1 to 20
// digits (leading zeros count), no sign, no overflow; it reports false
// otherwise. Sids, UNSUB maxima and JetStream sequences are read with it. JetStream layers
// use it for sequence numbers in subjects and headers.
func ParseUint[T ~string | ~[]byte](b T) (uint64, bool) {
	n, err := parseUint(b)
	return n, err == nil
}
