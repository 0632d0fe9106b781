package proto

import (
	"strconv"

	"github.com/natsio/natsio/internal/wire"
)

// AppendPub appends "PUB <subject> [reply] <size>\r\n<payload>\r\n". The
// subject and a non-empty reply must be valid publish subjects; otherwise
// dst is returned unchanged with ErrBadSubject.
func AppendPub(dst []byte, subject, reply string, payload []byte) ([]byte, error) {
	if err := validatePubSubjects(subject, reply); err != nil {
		return dst, err
	}
	return wire.AppendPubUnchecked(dst, subject, reply, payload), nil
}

// AppendHPub appends "HPUB <subject> [reply] <hdr_size> <total_size>\r\n",
// the header block of h (see AppendHeaderBlock), the payload and "\r\n".
// A nil h gives the empty block "NATS/1.0\r\n\r\n"; an unmodified
// received header is written as the block it was received as, which
// forwards a message's headers unchanged. Subjects and h are validated
// first; on error dst is returned unchanged.
func AppendHPub(dst []byte, subject, reply string, h *Header, payload []byte) ([]byte, error) {
	if err := validatePubSubjects(subject, reply); err != nil {
		return dst, err
	}
	if err := h.Validate(); err != nil {
		return dst, err
	}
	hl := h.EncodedLen()
	dst = append(dst, "HPUB "...)
	dst = append(dst, subject...)
	dst = append(dst, ' ')
	if reply != "" {
		dst = append(dst, reply...)
		dst = append(dst, ' ')
	}
	dst = wire.AppendSize(dst, hl)
	dst = append(dst, ' ')
	dst = wire.AppendSize(dst, hl+len(payload))
	dst = append(dst, "\r\n"...)
	dst = appendHeaderBlock(dst, h)
	dst = append(dst, payload...)
	return append(dst, "\r\n"...), nil
}

func validatePubSubjects(subject, reply string) error {
	if !validSubject(subject, false) {
		return ErrBadSubject
	}
	if reply != "" && !validSubject(reply, false) {
		return ErrBadSubject
	}
	return nil
}

// AppendSub appends "SUB <subject> [queue] <sid>\r\n" after validating the
// subject (wildcards allowed) and a non-empty queue name.
func AppendSub(dst []byte, subject, queue string, sid uint64) ([]byte, error) {
	if !validSubject(subject, true) {
		return dst, ErrBadSubject
	}
	if queue != "" && ValidateQueue(queue) != nil {
		return dst, ErrBadQueue
	}
	dst = append(dst, "SUB "...)
	dst = append(dst, subject...)
	dst = append(dst, ' ')
	if queue != "" {
		dst = append(dst, queue...)
		dst = append(dst, ' ')
	}
	dst = strconv.AppendUint(dst, sid, 10)
	return append(dst, "\r\n"...), nil
}

// AppendUnsub appends "UNSUB <sid> [max]\r\n"; max 0 means unsubscribe now.
func AppendUnsub(dst []byte, sid, max uint64) []byte {
	dst = append(dst, "UNSUB "...)
	dst = strconv.AppendUint(dst, sid, 10)
	if max > 0 {
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, max, 10)
	}
	return append(dst, "\r\n"...)
}

// AppendConnect appends "CONNECT <json>\r\n". The caller encodes the JSON;
// it must be a single line.
func AppendConnect(dst []byte, json []byte) []byte {
	dst = append(dst, "CONNECT "...)
	dst = append(dst, json...)
	return append(dst, "\r\n"...)
}

// AppendPing appends "PING\r\n".
func AppendPing(dst []byte) []byte { return append(dst, "PING\r\n"...) }

// AppendPong appends "PONG\r\n".
func AppendPong(dst []byte) []byte { return append(dst, "PONG\r\n"...) }
