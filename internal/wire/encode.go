package wire

import "strconv"

// AppendPubUnchecked appends "PUB <subject> [reply] <size>\r\n<payload>\r\n"
// for a caller that has validated subject and reply itself
// (proto.ValidatePublishSubject): it appends the frame as given.
func AppendPubUnchecked(dst []byte, subject, reply string, payload []byte) []byte {
	dst = append(dst, "PUB "...)
	dst = append(dst, subject...)
	dst = append(dst, ' ')
	if reply != "" {
		dst = append(dst, reply...)
		dst = append(dst, ' ')
	}
	dst = AppendSize(dst, len(payload))
	dst = append(dst, "\r\n"...)
	dst = append(dst, payload...)
	return append(dst, "\r\n"...)
}

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
	dst = AppendSize(dst, len(payload))
	dst = append(dst, "\r\n"...)
	dst = append(dst, payload...)
	return append(dst, "\r\n"...)
}

// AppendHMsg appends "HMSG <subject> <sid> [reply] <hdr> <total>\r\n", the
// raw header block, the payload and "\r\n".
func AppendHMsg(dst []byte, subject string, sid uint64, reply string, block, payload []byte) []byte {
	dst = appendMsgStart(dst, "HMSG ", subject, sid, reply)
	dst = AppendSize(dst, len(block))
	dst = append(dst, ' ')
	dst = AppendSize(dst, len(block)+len(payload))
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

// AppendSize appends a non-negative size in decimal; it is the hot part of
// every PUB line, so small values take a short path.
func AppendSize(dst []byte, n int) []byte {
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
