package natscontext

import (
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
)

// redacted replaces a secret's value when printing a Context.
const redacted = "[REDACTED]"

// secrets names the settings that hold a secret themselves (not the path
// of a file holding one).
func (c *Context) secrets() []string {
	var out []string
	for _, s := range []struct{ name, v string }{
		{"password", c.Password}, {"token", c.Token}, {"user_seed", c.UserSeed}, {"user_jwt", c.UserJWT},
	} {
		if s.v != "" {
			out = append(out, s.name)
		}
	}
	if urlHasPassword(c.URL) {
		out = append(out, "url password")
	}
	return out
}

// urlHasPassword reports a URL in the comma-separated list that carries
// a password or token.
func urlHasPassword(list string) bool {
	for _, raw := range strings.Split(list, ",") {
		if u, err := url.Parse(strings.TrimSpace(raw)); err == nil && u.User != nil {
			return true
		}
	}
	return false
}

// checkMode records a warning when the file its group or others can read
// holds a secret.
func (c *Context) checkMode(path string, mode fs.FileMode) {
	if mode.Perm()&0o077 == 0 {
		return
	}
	if s := c.secrets(); len(s) > 0 {
		c.warnings = append(c.warnings, fmt.Sprintf("context file %s is readable by its group or others (mode %v) and holds %s: make it 0600",
			path, mode.Perm(), strings.Join(s, ", ")))
	}
}

// Warnings lists what Load or LoadFile found wrong without refusing the
// context: a file that its group or others can read (any permission bit
// in 0o077) while it holds a password, token, user JWT or seed, or a URL
// with credentials. Connect logs them with slog's default logger. A
// Context built in code has none.
func (c *Context) Warnings() []string { return c.warnings }

// logWarnings logs c's warnings with slog's default logger.
func (c *Context) logWarnings() {
	for _, w := range c.warnings {
		slog.Default().Warn("natscontext: " + w)
	}
}

// plain is Context without its methods, for printing a redacted copy.
type plain Context

// redactedCopy is c with every secret replaced by [REDACTED] and the
// URLs' credentials removed.
func (c *Context) redactedCopy() plain {
	p := plain(*c)
	for _, s := range []*string{&p.Password, &p.Token, &p.UserSeed, &p.UserJWT} {
		if *s != "" {
			*s = redacted
		}
	}
	if urlHasPassword(p.URL) {
		urls := strings.Split(p.URL, ",")
		for i, raw := range urls {
			if u, err := url.Parse(strings.TrimSpace(raw)); err == nil && u.User != nil {
				u.User = url.User(redacted)
				urls[i] = u.String()
			}
		}
		p.URL = strings.Join(urls, ",")
	}
	p.warnings = nil
	return p
}

// Format prints c with its secrets (password, token, user JWT and seed,
// credentials in the URL) replaced by [REDACTED], for every verb: %v,
// %+v, %#v and %s print no secret, also through a *Context.
func (c Context) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, fmt.FormatString(f, verb), c.redactedCopy())
}

// String is %+v of c: its settings with the secrets redacted.
func (c Context) String() string { return fmt.Sprintf("%+v", c.redactedCopy()) }

// GoString is %#v of c, secrets redacted.
func (c Context) GoString() string { return fmt.Sprintf("%#v", c.redactedCopy()) }
