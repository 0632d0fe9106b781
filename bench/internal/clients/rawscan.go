package clients

import (
	"bytes"
	"fmt"
	"io"
)

// MsgScanner is the raw subscriber's reader: it counts the MSG frames of a
// connection that carries one subscription, checking each frame's payload
// size and trailing CRLF, without copying, converting or allocating per
// message. It reads straight from the connection into one large buffer
// and scans every complete frame the read brought, so a read of 256 KiB
// costs one system call for thousands of 16-byte messages; the counts are
// handed on once per read, not once per message.
//
// Other frames (PING, PONG, +OK, -ERR, INFO) go to the control function;
// HMSG and anything else is a protocol error, as it never reaches a plain
// subscription.
type MsgScanner struct {
	r    io.Reader
	buf  []byte
	head int // first unscanned byte
	tail int // end of the bytes read
	need int // bytes from head that the frame at head needs, when known
	size int // the payload size every MSG must have
}

// NewMsgScanner scans r with a buffer of bufSize bytes, for MSG frames
// whose payloads should all be size bytes. A frame larger than the buffer
// grows it to fit.
func NewMsgScanner(r io.Reader, bufSize, size int) *MsgScanner {
	return &MsgScanner{r: r, buf: make([]byte, bufSize), size: size}
}

// ScanResult is what one Scan found: MSG frames, and how many of them had
// a payload size other than the expected one.
type ScanResult struct {
	Msgs, BadSize int64
}

// Scan reads once from the connection and scans every complete frame in
// the buffer. control is called for each frame that is not a MSG (line
// without its CRLF, valid only during the call); an error it returns ends
// the scan. A read error is returned with the counts of the frames
// scanned before it.
func (s *MsgScanner) Scan(control func(line []byte) error) (ScanResult, error) {
	// Move the partial frame at head (less than one frame) to the front,
	// so that every read has the rest of the buffer, and grow the buffer
	// when that frame will not fit in it.
	if s.head > 0 {
		s.tail = copy(s.buf, s.buf[s.head:s.tail])
		s.head = 0
	}
	if s.need > len(s.buf) || s.tail == len(s.buf) {
		grown := make([]byte, max(2*len(s.buf), s.need))
		s.tail = copy(grown, s.buf[:s.tail])
		s.buf = grown
	}
	n, rerr := s.r.Read(s.buf[s.tail:])
	s.tail += n
	res, err := s.scan(control)
	if err != nil {
		return res, err
	}
	return res, rerr
}

// scan counts the complete frames in buf[head:tail].
func (s *MsgScanner) scan(control func(line []byte) error) (ScanResult, error) {
	var res ScanResult
	buf, i := s.buf[:s.tail], s.head
	for i < len(buf) {
		nl := bytes.IndexByte(buf[i:], '\n')
		if nl < 0 {
			break
		}
		nl += i
		line := buf[i:nl]
		if len(line) == 0 || line[len(line)-1] != '\r' {
			s.head = i
			return res, fmt.Errorf("%w: control line %q not ended by CRLF", ErrProtocol, line)
		}
		line = line[:len(line)-1]
		if len(line) < 4 || line[0] != 'M' || line[1] != 'S' || line[2] != 'G' || line[3] != ' ' {
			if err := control(line); err != nil {
				s.head = i
				return res, err
			}
			i = nl + 1
			continue
		}
		// MSG <subject> <sid> [reply] <size>: the size is the last field.
		j, size := len(line), 0
		for j > 4 && line[j-1] >= '0' && line[j-1] <= '9' {
			j--
		}
		if j == len(line) || len(line)-j > 9 || line[j-1] != ' ' {
			s.head = i
			return res, fmt.Errorf("%w: bad MSG line %q", ErrProtocol, line)
		}
		for _, c := range line[j:] {
			size = size*10 + int(c-'0')
		}
		end := nl + 1 + size + 2
		if end > len(buf) {
			s.head, s.need = i, end-i // the payload has not all arrived
			return res, nil
		}
		if buf[end-2] != '\r' || buf[end-1] != '\n' {
			s.head = i
			return res, fmt.Errorf("%w: payload not followed by CRLF", ErrProtocol)
		}
		res.Msgs++
		if size != s.size {
			res.BadSize++
		}
		i = end
	}
	s.head, s.need = i, 0
	return res, nil
}
