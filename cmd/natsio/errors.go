package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/pull"
)

// Exit codes.
const (
	exitError       = 1   // the command failed
	exitUsage       = 2   // bad command line
	exitInternal    = 70  // a bug: a recovered panic
	exitInterrupted = 130 // Ctrl-C before the command finished
)

// usageError is a malformed command line: unknown command or flag, bad
// flag value, wrong number of arguments.
type usageError struct {
	err error
	cmd *cobra.Command
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// userError is an error with its explanation already written: what went
// wrong and what to do about it.
type userError struct {
	msg  string
	hint string
	err  error
}

func (e userError) Error() string { return e.msg }
func (e userError) Unwrap() error { return e.err }

// connectError is a failed connection attempt.
type connectError struct {
	url     string
	timeout time.Duration
	err     error
}

func (e connectError) Error() string { return "connecting to " + e.url + ": " + e.err.Error() }
func (e connectError) Unwrap() error { return e.err }

// panicError is a recovered panic.
type panicError struct{ v any }

func (e panicError) Error() string { return fmt.Sprint(e.v) }

// report prints err on stderr, one line with the problem and, when there
// is one, a line saying what to do, and returns the exit code.
func (a *app) report(err error) int {
	var ec exitStatus
	if errors.As(err, &ec) {
		return int(ec) // the output already said it (server check)
	}
	msg, hint, code := a.explain(err)
	msg = strings.ReplaceAll(msg, "\n", " ")
	if a.stderrTerm && !a.noEscape {
		msg = string(escapeControls(nil, []byte(msg)))
	}
	fmt.Fprintf(a.stderr, "natsio: %s\n", msg)
	if hint != "" {
		fmt.Fprintf(a.stderr, "hint: %s\n", hint)
	}
	return code
}

// explain turns err into a message, a hint and an exit code.
func (a *app) explain(err error) (msg, hint string, code int) {
	var (
		pe  panicError
		ue  usageError
		ure userError
		ce  connectError
		se  *conn.ServerError
	)
	switch {
	case errors.As(err, &pe):
		return "internal error: " + pe.Error() + " (a bug in natsio; please report it with the command you ran)", "", exitInternal
	case errors.As(err, &ue):
		msg = strconvErr.ReplaceAllStringFunc(ue.Error(), func(m string) string {
			if strings.HasSuffix(m, "out of range") {
				return "number out of range"
			}
			return "not a number"
		})
		hint = "run 'natsio --help' for the list of commands"
		if ue.cmd != nil {
			hint = fmt.Sprintf("run '%s --help' for usage and examples", ue.cmd.CommandPath())
		}
		return msg, hint, exitUsage
	case isCobraUsage(err):
		return err.Error(), "run 'natsio --help' for the list of commands", exitUsage
	case errors.As(err, &ure):
		return ure.msg, ure.hint, exitError
	case errors.Is(err, context.Canceled), a.ctx != nil && a.ctx.Err() != nil:
		return "interrupted", "", exitInterrupted
	}

	code = exitError
	connecting := errors.As(err, &ce)
	if connecting && a.conn.ctx != nil {
		defer func() {
			hint = strings.TrimSpace(hint + fmt.Sprintf(" (the settings came from context %s: see `natsio context info %s`)", a.conn.ctx.Name, a.conn.ctx.Name))
		}()
	}
	switch {
	case errors.Is(err, conn.ErrAuthorization), errors.Is(err, conn.ErrAuthExpired),
		errors.Is(err, conn.ErrAuthRevoked), errors.Is(err, conn.ErrAccountExpired):
		msg = "authorization failed"
		if connecting {
			msg += " connecting to " + ce.url
		}
		if errors.As(err, &se) && se.Text != "" {
			msg += ": " + se.Text
		}
		hint = "check --user/--password, --token, --creds or --nkey (or $NATS_USER, $NATS_PASSWORD, $NATS_TOKEN, $NATS_CREDS, $NATS_NKEY)"
	case errors.Is(err, conn.ErrBadCredentials):
		msg = trimPrefixes(err)
		hint = "the --creds or --nkey file cannot be used: check its path and that it holds a user seed"
	case errors.Is(err, conn.ErrInvalidOption) && connecting:
		msg = trimPrefixes(ce.err)
		hint = "check the files given to --tlsca, --tlscert, --tlskey and the --server URL"
	case errors.Is(err, conn.ErrPermissions):
		msg = "permission denied"
		if errors.As(err, &se) && se.Text != "" {
			msg += ": " + se.Text
		}
		hint = "the user may not publish or subscribe there; check the user's permissions on the server"
	case isTLSError(err):
		msg = trimPrefixes(err)
		hint = "use a tls:// URL with --tlsca (and --tlscert/--tlskey for mutual TLS); add --tlsfirst for servers with handshake_first"
	case connecting:
		msg = fmt.Sprintf("cannot connect to %s: %s", ce.url, rootCause(ce.err, ce.timeout))
		hint = "is a server running? try `natsio server`, or point --server (or $NATS_URL) at one"
	case errors.Is(err, conn.ErrBadSubject):
		msg = trimPrefixes(err)
		hint = "subjects are dot-separated tokens without spaces (e.g. orders.new); wildcards * and > are for subscriptions only"
	case errors.Is(err, jsapi.ErrNotEnabled), errors.Is(err, jsapi.ErrNotEnabledForAccount):
		msg = "JetStream is not enabled on this server or account"
		hint = "`natsio server` runs with JetStream on; for nats-server, start it with -js"
	case errors.Is(err, jsapi.ErrNoStreamResponse):
		msg = "no stream stored the message: " + trimPrefixes(err)
		hint = "no stream captures that subject; create one with `natsio stream add NAME --subjects SUBJECT`"
	case errors.Is(err, conn.ErrNoResponders):
		msg = trimPrefixes(err)
		hint = "nobody is listening on that subject; start a responder with `natsio reply SUBJECT`"
	case errors.Is(err, kv.ErrBucketNotFound):
		msg = trimPrefixes(err)
		hint = "list buckets with `natsio kv ls`, or create one with `natsio kv add BUCKET`"
	case errors.Is(err, jsapi.ErrStreamNotFound):
		msg = trimPrefixes(err)
		hint = "list streams with `natsio stream ls`, or create one with `natsio stream add`"
	case errors.Is(err, jsapi.ErrConsumerNotFound):
		msg = trimPrefixes(err)
		hint = "list consumers with `natsio consumer ls STREAM`, or create one with `natsio consumer add`"
	case errors.Is(err, kv.ErrKeyNotFound):
		msg = trimPrefixes(err)
		hint = "list keys with `natsio kv ls BUCKET`"
	case errors.Is(err, jsapi.ErrMsgNotFound):
		msg = trimPrefixes(err)
		hint = "see the stream's first and last sequence with `natsio stream info STREAM`"
	case errors.Is(err, pull.ErrNoMessages):
		msg = trimPrefixes(err)
		hint = "the consumer has nothing pending; wait longer with --wait or publish first"
	case errors.Is(err, jsapi.ErrInvalidName), errors.Is(err, kv.ErrInvalidBucketName), errors.Is(err, kv.ErrInvalidKey):
		msg = trimPrefixes(err)
		hint = "names use letters, digits, '-' and '_' (keys may also hold '.', '/', '='), without spaces or wildcards"
	case errors.Is(err, jsapi.ErrStreamNameInUse), errors.Is(err, kv.ErrBucketExists):
		msg = trimPrefixes(err)
		hint = "it exists with another configuration; change it with `natsio stream edit` or pick another name"
	case errors.Is(err, jsapi.ErrSubjectOverlap):
		msg = trimPrefixes(err)
		hint = "another stream already captures those subjects; see `natsio stream ls`"
	case errors.Is(err, conn.ErrMaxPayload), errors.Is(err, jsapi.ErrMessageTooLarge):
		msg = trimPrefixes(err)
		hint = "the message is larger than the server accepts; use the object store (`natsio object put`) for large data"
	case errors.Is(err, conn.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		msg = trimPrefixes(err)
		hint = fmt.Sprintf("no answer within --timeout %v; raise it, or check the server is healthy", a.conn.timeout)
	case errors.Is(err, conn.ErrClosed), errors.Is(err, conn.ErrDisconnected):
		msg = "connection lost: " + trimPrefixes(err)
		hint = "the server went away; check it is still running"
	default:
		msg = trimPrefixes(err)
	}
	return msg, hint, code
}

// isCobraUsage recognises cobra's own command-line errors that do not go
// through the flag error function.
func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "required flag", "flag needs an argument", "invalid argument"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// isTLSError reports a TLS handshake or certificate failure.
func isTLSError(err error) bool {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		record           tls.RecordHeaderError
		verify           *tls.CertificateVerificationError
	)
	return errors.Is(err, conn.ErrTLSRequired) || errors.Is(err, conn.ErrServerSecureNeeded) ||
		errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &record) || errors.As(err, &verify)
}

// rootCause names why a connection attempt failed in a few words.
func rootCause(err error, timeout time.Duration) string {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return "unknown host " + dns.Name
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, conn.ErrTimeout), isNetTimeout(err):
		return fmt.Sprintf("no answer within %v", timeout)
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	case errors.Is(err, conn.ErrInvalidOption):
		return trimPrefixes(err)
	}
	return trimPrefixes(err)
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// trimPrefixes drops the package prefixes ("nats: ", "jsapi: "…) that are
// noise to a person reading an error on a terminal.
func trimPrefixes(err error) string {
	s := err.Error()
	for _, p := range []string{"nats: ", "jsapi: ", "kv: ", "pull: ", "pubwin: ", "objstore: ", "proto: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

// badSubject explains a subject the server would refuse.
func badSubject(subject string, publish bool, err error) error {
	if publish && strings.ContainsAny(subject, "*>") {
		return userError{msg: fmt.Sprintf("invalid subject %q: wildcards (* and >) cannot be published to", subject),
			hint: "publish to a literal subject such as orders.new; wildcards are for subscriptions", err: err}
	}
	return userError{msg: fmt.Sprintf("invalid subject %q", subject),
		hint: "subjects are dot-separated tokens without spaces or empty tokens, e.g. orders.new (subscriptions may use * and >)", err: err}
}

var strconvErr = regexp.MustCompile(`strconv\.Parse\w+: parsing "[^"]*": (invalid syntax|value out of range)`)

// notFound wraps err, when it says the named thing does not exist, with a
// message naming it; other errors pass through.
func notFound(err error, what, name, hint string, sentinels ...error) error {
	if err == nil {
		return nil
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return userError{msg: fmt.Sprintf("%s %q not found", what, name), hint: hint, err: err}
		}
	}
	return err
}

// streamErr names a missing stream in err.
func streamErr(err error, stream string) error {
	return notFound(err, "stream", stream,
		"list streams with `natsio stream ls`, or create it with `natsio stream add "+stream+"`",
		jsapi.ErrStreamNotFound)
}

// consumerErr names a missing stream or consumer in err.
func consumerErr(err error, stream, consumer string) error {
	if errors.Is(err, jsapi.ErrStreamNotFound) {
		return streamErr(err, stream)
	}
	return notFound(err, "consumer", stream+" > "+consumer,
		"list consumers with `natsio consumer ls "+stream+"`, or create it with `natsio consumer add "+stream+" "+consumer+"`",
		jsapi.ErrConsumerNotFound, jsapi.ErrConsumerDoesNotExist)
}
