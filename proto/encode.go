package proto

import "strconv"

// AppendPub appends "PUB <subject> [reply] <size>\r\n<payload>\r\n". The
// subject and a non-empty reply must be valid publish subjects; otherwise
// dst is returned unchanged with ErrBadSubject.
func AppendPub(dst []byte, subject, reply string, payload []byte) ([]byte, error) {
	if err := validatePubSubjects(subject, reply); err != nil {
		return dst, err
	}
	return AppendPubUnchecked(dst, subject, reply, payload), nil
}

// AppendPubUnchecked is AppendPub for a caller that has validated subject
// and reply itself (with ValidatePublishSubject or a SubjectMemo): it
// appends the frame as given.
func AppendPubUnchecked(dst []byte, subject, reply string, payload []byte) []byte {
	dst = append(dst, "PUB "...)
	dst = append(dst, subject...)
	dst = append(dst, ' ')
	if reply != "" {
		dst = append(dst, reply...)
		dst = append(dst, ' ')
	}
	dst = appendSize(dst, len(payload))
	dst = append(dst, "\r\n"...)
	dst = append(dst, payload...)
	return append(dst, "\r\n"...)
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
	dst = appendSize(dst, hl)
	dst = append(dst, ' ')
	dst = appendSize(dst, hl+len(payload))
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

// Server-side encoders, for scripted test servers and fuzzing. They do not
// validate their arguments: a test server may mean to send garbage.

// AppendInfo appends "INFO <json>\r\n".
func AppendInfo(dst []byte, json []byte) []byte {
	dst = append(dst, "INFO "...)
	dst = append(dst, json...)
	return append(dst, "\r\n"...)
}

// AppendMsg appends "MSG <subject> <sid> [reply] <size>\r\n<payload>\r\n".
func AppendMsg(dst []byte, subject string, sid uint64, reply string, payload []byte) []byte {
	dst = appendMsgStart(dst, "MSG ", subject, sid, reply)
	dst = appendSize(dst, len(payload))
	dst = append(dst, "\r\n"...)
	dst = append(dst, payload...)
	return append(dst, "\r\n"...)
}

// AppendHMsg appends "HMSG <subject> <sid> [reply] <hdr> <total>\r\n", the
// raw header block, the payload and "\r\n".
func AppendHMsg(dst []byte, subject string, sid uint64, reply string, block, payload []byte) []byte {
	dst = appendMsgStart(dst, "HMSG ", subject, sid, reply)
	dst = appendSize(dst, len(block))
	dst = append(dst, ' ')
	dst = appendSize(dst, len(block)+len(payload))
	dst = append(dst, "\r\n"...)
	dst = append(dst, block...)
	dst = append(dst, payload...)
	return append(dst, "\r\n"...)
}

func appendMsgStart(dst []byte, op, subject string, sid uint64, reply string) []byte {
	dst = append(dst, op...)
	dst = append(dst, subject...)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, sid, 10)
	dst = append(dst, ' ')
	if reply != "" {
		dst = append(dst, reply...)
		dst = append(dst, ' ')
	}
	return dst
}

// AppendErr appends "-ERR '<text>'\r\n".
func AppendErr(dst []byte, text string) []byte {
	dst = append(dst, "-ERR '"...)
	dst = append(dst, text...)
	return append(dst, "'\r\n"...)
}

// AppendOK appends "+OK\r\n".
func AppendOK(dst []byte) []byte { return append(dst, "+OK\r\n"...) }

// appendSize appends a non-negative size in decimal; it is the hot part of
// every PUB line, so small values take a short path.
func appendSize(dst []byte, n int) []byte {
	switch {
	case n < 10:
		return append(dst, byte('0'+n))
	case n < 100:
		return append(dst, byte('0'+n/10), byte('0'+n%10))
	case n < 1000:
		return append(dst, byte('0'+n/100), byte('0'+n/10%10), byte('0'+n%10))
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return append(dst, b[i:]...)
}
