package micro

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/natsio/natsio/conn"
)

// Errors of the micro package, matched with errors.Is. The configuration
// errors come wrapped in a *ConfigError naming the offending field; they
// are returned before anything is sent to the server.
var (
	// ErrInvalidName: a service or endpoint name is empty or holds a
	// character other than A-Z, a-z, 0-9, '-' and '_'.
	ErrInvalidName = errors.New("micro: invalid name")
	// ErrInvalidVersion: a service version is not a semantic version
	// (https://semver.org: MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]).
	ErrInvalidVersion = errors.New("micro: invalid version")
	// ErrInvalidSubject: an endpoint's subject (group prefix included) is
	// not a valid subscription subject.
	ErrInvalidSubject = errors.New("micro: invalid endpoint subject")
	// ErrInvalidQueueGroup: a queue group name is not a valid NATS queue
	// name (empty, or holds whitespace or control bytes).
	ErrInvalidQueueGroup = errors.New("micro: invalid queue group")
	// ErrInvalidConfig: anything else that is wrong with a configuration,
	// an option or an argument (a nil connection or handler, a stall that
	// is not positive…).
	ErrInvalidConfig = errors.New("micro: invalid configuration")
	// ErrStopped: the service has stopped (Stop, or its connection closed);
	// no endpoint can be added to it.
	ErrStopped = errors.New("micro: service stopped")
	// ErrInvalidServiceError: Request.Error was given a code that is not
	// an integer, or an empty description. Nothing was sent, and the call
	// still counts as an error of the endpoint.
	ErrInvalidServiceError = errors.New("micro: service error needs an integer code and a description")
	// ErrBadResponse: a discovery reply (Ping, Infos, StatsOf) is not the
	// JSON of the expected ADR-32 response type.
	ErrBadResponse = errors.New("micro: malformed discovery response")
)

// ConfigError is a configuration or argument rejected before anything was
// sent. Err is one of the sentinels above (ErrInvalidName,
// ErrInvalidVersion, ErrInvalidSubject, ErrInvalidQueueGroup,
// ErrInvalidConfig), so errors.Is matches it.
type ConfigError struct {
	Field string // "name", "version", "endpoint name", "subject", …
	Value string // the rejected value, quoted in Error
	Err   error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%v: %s %q", e.Err, e.Field, e.Value)
}

func (e *ConfigError) Unwrap() error { return e.Err }

func configErr(sentinel error, field, value string) error {
	return &ConfigError{Field: field, Value: value, Err: sentinel}
}

// ServiceError is the error a service reported in a response, through the
// Nats-Service-Error-Code and Nats-Service-Error headers. ResponseError
// extracts it from a reply.
type ServiceError struct {
	Code        string // Nats-Service-Error-Code, an integer as text
	Description string // Nats-Service-Error
}

func (e *ServiceError) Error() string {
	return "micro: service error " + e.Code + ": " + e.Description
}

// ResponseError returns the *ServiceError carried by a service's reply m,
// or nil when m has neither of the two error headers. ADR-32 asks every
// client of a service to check replies this way.
func ResponseError(m *conn.Msg) error {
	if m == nil || m.Header.IsZero() {
		return nil
	}
	code, hasCode := m.Header.Lookup(ErrorCodeHeader)
	desc, hasDesc := m.Header.Lookup(ErrorHeader)
	if !hasCode && !hasDesc {
		return nil
	}
	// Copies: the error may outlive m (a lent message).
	return &ServiceError{Code: strings.Clone(code), Description: strings.Clone(desc)}
}

// sanitizeDescription returns s with each control byte (C0 but tab, and
// DEL) replaced by a space; s itself when it has none.
func sanitizeDescription(s string) string {
	i := 0
	for i < len(s) && !isControl(s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if isControl(b[i]) {
			b[i] = ' '
		}
	}
	return string(b)
}

func isControl(c byte) bool { return c < ' ' && c != '\t' || c == 0x7f }

// validName reports whether s is a valid service or endpoint name:
// non-empty, only A-Z, a-z, 0-9, '-' and '_'.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validSemver reports whether v is a semantic version 2.0.0:
// MAJOR.MINOR.PATCH, numbers without leading zeros, an optional pre-release
// ("-" and dot-separated identifiers of [0-9A-Za-z-], numeric ones without
// leading zeros) and optional build metadata ("+" and dot-separated
// identifiers of [0-9A-Za-z-]).
func validSemver(v string) bool {
	rest, build, hasBuild := strings.Cut(v, "+")
	if hasBuild && !validIdentifiers(build, false) {
		return false
	}
	// The core has no '-', so the first one starts the pre-release.
	core, pre, hasPre := strings.Cut(rest, "-")
	if hasPre && !validIdentifiers(pre, true) {
		return false
	}
	n := 0
	for part := range strings.SplitSeq(core, ".") {
		n++
		if !isDigits(part) || len(part) > 1 && part[0] == '0' {
			return false
		}
	}
	return n == 3
}

func validIdentifiers(s string, prerelease bool) bool {
	for id := range strings.SplitSeq(s, ".") {
		if id == "" {
			return false
		}
		for i := 0; i < len(id); i++ {
			if c := id[i]; !isAlnum(c) && c != '-' {
				return false
			}
		}
		if prerelease && isDigits(id) && len(id) > 1 && id[0] == '0' {
			return false
		}
	}
	return true
}

// validErrorCode reports whether code parses as an integer, as ADR-32 asks
// of Nats-Service-Error-Code.
func validErrorCode(code string) bool {
	_, err := strconv.ParseInt(code, 10, 64)
	return err == nil
}
