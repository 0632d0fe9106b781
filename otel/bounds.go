package natsotel

import (
	"strings"
	"unicode/utf8"
)

// MaxAttributeLength bounds, in bytes, every span attribute value and
// span-name destination taken from a message: its subject, subscription
// subject and queue, Nats-Msg-Id header, stream and consumer. Message
// headers and subjects come from whoever published, and the OpenTelemetry
// SDK sets no attribute length limit by default, so a 1 MB header would
// otherwise be copied into every span and held until it is exported. A
// longer value is cut at a UTF-8 boundary at or below the bound.
const MaxAttributeLength = 256

// clip returns a copy of s of at most MaxAttributeLength bytes. The copy
// also detaches s from a borrowed message's memory, which the connection
// reuses while the span lives on.
func clip(s string) string {
	if len(s) <= MaxAttributeLength {
		return strings.Clone(s)
	}
	n := MaxAttributeLength
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.Clone(s[:n])
}
