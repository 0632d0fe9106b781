package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natscontext"
)

// defaultURL is the server every command connects to without --server,
// NATS_URL or a context: the one `natsio server` starts by default.
const defaultURL = natscontext.DefaultURL

// connFlags are the connection flags every command accepts.
type connFlags struct {
	server      string
	creds       string
	nkey        string
	user        string
	password    string
	token       string
	tlsCert     string
	tlsKey      string
	tlsCA       string
	tlsFirst    bool
	timeout     time.Duration
	name        string
	inboxPrefix string
	jsDomain    string
	jsAPIPrefix string
	context     string
	noContext   bool

	// ctx is the context the connection was resolved from (nil: none).
	ctx *natscontext.Context
	// resolved holds the context merged with the flags and environment.
	resolved natscontext.Context
}

// envFlags are the global flags with an environment fallback, read after
// the command line is parsed so that --help never prints their values.
var envFlags = []struct{ flag, env string }{
	{"server", "NATS_URL"}, {"creds", "NATS_CREDS"}, {"nkey", "NATS_NKEY"}, {"user", "NATS_USER"},
	{"password", "NATS_PASSWORD"}, {"token", "NATS_TOKEN"}, {"tlscert", "NATS_CERT"}, {"tlskey", "NATS_KEY"},
	{"tlsca", "NATS_CA"}, {"timeout", "NATS_TIMEOUT"}, {"context", "NATS_CONTEXT"},
}

// addGlobalFlags registers the connection and output flags on root; they
// are inherited by every command. No default comes from the environment
// here: resolveConn reads it after parsing.
func (a *app) addGlobalFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	c := &a.conn
	f.StringVarP(&c.server, "server", "s", "", "NATS server URL(s), comma separated ($NATS_URL; default: the context's, or "+defaultURL+")")
	f.StringVar(&c.creds, "creds", "", "user credentials (JWT + nkey seed) file ($NATS_CREDS)")
	f.StringVar(&c.nkey, "nkey", "", "user nkey seed file ($NATS_NKEY)")
	f.StringVar(&c.user, "user", "", "user name ($NATS_USER)")
	f.StringVar(&c.password, "password", "", "password ($NATS_PASSWORD)")
	f.StringVar(&c.token, "token", "", "authentication token ($NATS_TOKEN)")
	f.StringVar(&c.tlsCert, "tlscert", "", "TLS client certificate file ($NATS_CERT)")
	f.StringVar(&c.tlsKey, "tlskey", "", "TLS client private key file ($NATS_KEY)")
	f.StringVar(&c.tlsCA, "tlsca", "", "TLS certificate authority file to trust ($NATS_CA)")
	f.BoolVar(&c.tlsFirst, "tlsfirst", false, "perform the TLS handshake before the server's INFO (handshake_first servers)")
	f.DurationVar(&c.timeout, "timeout", 5*time.Second, "time to wait for the connection and for each request ($NATS_TIMEOUT)")
	f.StringVar(&c.name, "name", "natsio", "client name shown in the server's monitoring")
	f.StringVar(&c.inboxPrefix, "inbox-prefix", "", "prefix of reply inboxes (default _INBOX)")
	f.StringVar(&c.jsDomain, "js-domain", "", "JetStream domain")
	f.StringVar(&c.jsAPIPrefix, "js-api-prefix", "", "JetStream API subject prefix (default $JS.API)")
	f.StringVar(&c.context, "context", "", "connection context to use ($NATS_CONTEXT; default: the selected one, see 'natsio context')")
	f.BoolVar(&c.noContext, "no-context", false, "use no context, not even the selected one")
	f.BoolVar(&a.json, "json", false, "print machine-readable JSON instead of tables")
	f.BoolVar(&a.noEscape, "no-escape", false, "print control characters to a terminal as they are (by default they are shown as \\xNN)")
}

// applyEnv fills the global flags not given on the command line from the
// environment.
func (a *app) applyEnv(cmd *cobra.Command) error {
	fs := cmd.Root().PersistentFlags()
	a.globals = fs
	for _, e := range envFlags {
		v, ok := os.LookupEnv(e.env)
		if !ok || v == "" || fs.Changed(e.flag) {
			continue
		}
		if err := fs.Set(e.flag, v); err != nil {
			return usageError{err: fmt.Errorf("$%s: %v", e.env, err), cmd: cmd}
		}
		fs.Lookup(e.flag).Changed = true
	}
	return nil
}

// resolveConn merges the connection flags (and environment) over the
// context (--context, $NATS_CONTEXT or the selected one), once, before
// the first connection. Flags and environment variables override the
// context; any authentication given that way replaces the context's.
func (a *app) resolveConn() error {
	if a.resolvedOnce {
		return nil
	}
	a.resolvedOnce = true
	fs := a.globals
	if fs == nil { // not run through the command tree (unit tests)
		fs = pflag.NewFlagSet("none", pflag.ContinueOnError)
	}
	c := &a.conn
	given := func(name string) bool { return fs.Changed(name) }
	var base natscontext.Context
	if !c.noContext {
		cx, err := loadContext(c.context, given("context"))
		if err != nil && !given("context") && errors.Is(err, natscontext.ErrNotFound) {
			// The selected context's file is gone: say so, and go on
			// without it rather than fail every command.
			fmt.Fprintf(a.stderr, "natsio: the selected context %q has no file; using none (select another with `natsio context select NAME`)\n", selectedName())
			cx, err = nil, nil
		}
		if err != nil {
			return err
		}
		if cx != nil {
			for _, w := range cx.Warnings() {
				fmt.Fprintf(a.stderr, "natsio: warning: %s\n", w)
			}
			c.ctx = cx
			base = *cx
		}
	}
	if anyChanged := given("user") || given("password") || given("token") || given("creds") || given("nkey"); anyChanged {
		base.User, base.Password, base.Token, base.Creds, base.NKey, base.UserJWT, base.UserSeed, base.NSC = "", "", "", "", "", "", "", ""
	}
	over := func(name string, dst *string, v string) {
		if given(name) {
			*dst = v
		}
	}
	over("server", &base.URL, c.server)
	over("user", &base.User, c.user)
	over("password", &base.Password, c.password)
	over("token", &base.Token, c.token)
	over("creds", &base.Creds, c.creds)
	over("nkey", &base.NKey, c.nkey)
	over("tlscert", &base.Cert, c.tlsCert)
	over("tlskey", &base.Key, c.tlsKey)
	over("tlsca", &base.CA, c.tlsCA)
	over("inbox-prefix", &base.InboxPrefix, c.inboxPrefix)
	if given("js-domain") {
		base.JetStreamDomain, base.JetStreamAPIPrefix = c.jsDomain, ""
	}
	if given("js-api-prefix") {
		base.JetStreamAPIPrefix, base.JetStreamDomain = c.jsAPIPrefix, ""
	}
	if given("tlsfirst") {
		base.TLSFirst = c.tlsFirst
	}
	c.resolved = base
	c.server = base.ServerURL()
	return nil
}

// loadContext reads the context name, or the selected one when name is
// empty and not explicitly given. It returns nil when no context is in
// use.
func loadContext(name string, explicit bool) (*natscontext.Context, error) {
	if name == "" {
		if explicit {
			return nil, usageError{err: errors.New("--context needs a name")}
		}
		sel, err := natscontext.Selected()
		if err != nil || sel == "" {
			return nil, nil
		}
		name = sel
	}
	load := natscontext.Load
	if explicit && strings.HasSuffix(name, ".json") {
		// As the nats CLI: a --context (or $NATS_CONTEXT) ending in
		// ".json" is the path of a context file the user chose.
		load = natscontext.LoadFile
	}
	cx, err := load(name)
	if err != nil {
		return nil, contextErr(err, name)
	}
	return cx, nil
}

// selectedName is the selected context's name, or "" when none is.
func selectedName() string {
	sel, _ := natscontext.Selected()
	return sel
}

// contextErr explains a context that cannot be used.
func contextErr(err error, name string) error {
	switch {
	case errors.Is(err, natscontext.ErrNotFound):
		return userError{msg: fmt.Sprintf("context %q not found", name),
			hint: "list contexts with `natsio context ls`, or create it with `natsio context add " + name + " --server URL`", err: err}
	case errors.Is(err, natscontext.ErrInvalidName):
		return userError{msg: fmt.Sprintf("invalid context name %q", name), hint: "names may not be empty or hold '..', '/' or '\\'", err: err}
	case errors.Is(err, natscontext.ErrUnsupported), errors.Is(err, natscontext.ErrConflict):
		return userError{msg: fmt.Sprintf("context %q cannot be used: %s", name, trimPrefixes(err)),
			hint: "fix it with `natsio context edit " + name + "`", err: err}
	}
	return err
}

// options turns the resolved flags and context into connection options.
func (c *connFlags) options() ([]conn.Option, error) {
	if c.timeout <= 0 {
		return nil, usageError{err: fmt.Errorf("--timeout must be positive, got %v", c.timeout)}
	}
	r := &c.resolved
	if r.Password != "" && r.User == "" {
		return nil, usageError{err: errors.New("--password needs --user")}
	}
	if (r.Cert == "") != (r.Key == "") {
		return nil, usageError{err: errors.New("--tlscert and --tlskey go together")}
	}
	opts, err := r.Options()
	if err != nil {
		name := r.Name
		if name == "" {
			return nil, usageError{err: fmt.Errorf("connection flags: %s", trimPrefixes(err))}
		}
		return nil, contextErr(err, name)
	}
	return append(opts,
		conn.Name(c.name),
		conn.ConnectTimeout(c.timeout),
		conn.RequestTimeout(c.timeout),
	), nil
}

// connect connects to the server named by the flags. Its errors say what
// failed and what to do (see errors.go).
func (a *app) connect(ctx context.Context) (*conn.Conn, error) {
	if err := a.resolveConn(); err != nil {
		return nil, err
	}
	opts, err := a.conn.options()
	if err != nil {
		return nil, err
	}
	nc, err := conn.Connect(ctx, a.conn.server, opts...)
	if err != nil {
		return nil, connectError{url: redactURL(a.conn.server), timeout: a.conn.timeout, err: err}
	}
	return nc, nil
}

// jetstream connects and returns a JetStream view of the connection. The
// caller closes the connection.
func (a *app) jetstream(ctx context.Context) (*conn.Conn, *jsapi.JS, error) {
	nc, err := a.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	js, err := jsapi.New(nc, append(a.conn.resolved.JSOptions(), jsapi.Timeout(a.conn.timeout))...)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// redactURL hides credentials in a server URL list.
func redactURL(urls string) string {
	parts := strings.Split(urls, ",")
	for i, u := range parts {
		u = strings.TrimSpace(u)
		if at := strings.LastIndex(u, "@"); at >= 0 {
			scheme := ""
			if j := strings.Index(u, "://"); j >= 0 && j < at {
				scheme = u[:j+3]
			}
			u = scheme + "***@" + u[at+1:]
		}
		parts[i] = u
	}
	return strings.Join(parts, ",")
}

// exactArgs, rangeArgs and minArgs validate positional arguments with
// usage errors that name the command's synopsis.
func exactArgs(n int) cobra.PositionalArgs {
	return rangeArgs(n, n)
}

func rangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) >= lo && len(args) <= hi {
			return nil
		}
		var what string
		switch {
		case lo == hi:
			what = fmt.Sprintf("%d argument(s)", lo)
		case hi > 1<<20:
			what = fmt.Sprintf("at least %d argument(s)", lo)
		default:
			what = fmt.Sprintf("%d to %d arguments", lo, hi)
		}
		return usageError{err: fmt.Errorf("%q takes %s, got %d (usage: %s)", c.CommandPath(), what, len(args), c.UseLine()), cmd: c}
	}
}

// changed reports whether the flag name was given on the command line.
func changed(c *cobra.Command, name string) bool {
	return c.Flags().Changed(name)
}

// sizeValue is a flag holding a byte size: 1024, 512KiB, 10MB, 1G; -1 for
// unlimited.
type sizeValue struct{ v *int64 }

func newSize(p *int64, def int64) sizeValue { *p = def; return sizeValue{p} }

func (s sizeValue) String() string {
	if s.v == nil || *s.v == 0 {
		return "0"
	}
	return strconv.FormatInt(*s.v, 10)
}

func (s sizeValue) Type() string { return "size" }

func (s sizeValue) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s.v = n
	return nil
}

// parseSize parses a byte size with an optional unit: B, K/KB/KiB, M/MB/MiB,
// G/GB/GiB, T/TB/TiB (all powers of 1024). -1 means unlimited.
func parseSize(v string) (int64, error) {
	s := strings.TrimSpace(strings.ToUpper(v))
	if s == "-1" || s == "UNLIMITED" {
		return -1, nil
	}
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TIB", 1 << 40}, {"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10},
		{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
		{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f*float64(mult) > math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size (examples: 1024, 512KiB, 10MB, 1GiB, -1 for unlimited)", v)
	}
	return int64(f * float64(mult)), nil
}

// durationValue is a duration flag that also accepts days and weeks
// ("7d", "2w", "1d12h"); 0 means none.
type durationValue struct{ v *time.Duration }

func newDuration(p *time.Duration, def time.Duration) durationValue {
	*p = def
	return durationValue{p}
}

// String is "0" for zero, which help treats as no default (a usage text
// saying what zero means is then the only default shown).
func (d durationValue) String() string {
	if d.v == nil || *d.v == 0 {
		return "0"
	}
	return d.v.String()
}

func (d durationValue) Type() string { return "duration" }

func (d durationValue) Set(v string) error {
	x, err := parseDuration(v)
	if err != nil {
		return err
	}
	*d.v = x
	return nil
}

// parseDuration parses a Go duration with optional leading day ("d") and
// week ("w") components.
func parseDuration(v string) (time.Duration, error) {
	s := strings.TrimSpace(v)
	bad := fmt.Errorf("%q is not a duration (examples: 30s, 5m, 1h30m, 7d, 2w; 0 for none)", v)
	if s == "0" || s == "" {
		return 0, nil
	}
	var total time.Duration
	for _, u := range []struct {
		unit string
		d    time.Duration
	}{{"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour}} {
		if i := strings.Index(s, u.unit); i > 0 {
			n, err := strconv.Atoi(s[:i])
			if err != nil || n < 0 {
				return 0, bad
			}
			total += time.Duration(n) * u.d
			s = s[i+1:]
		}
	}
	if s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, bad
		}
		total += d
	}
	return total, nil
}

// enumValue is a string flag restricted to a set of values.
type enumValue struct {
	v       *string
	allowed []string
}

func newEnum(p *string, def string, allowed ...string) *enumValue {
	*p = def
	return &enumValue{v: p, allowed: allowed}
}

func (e *enumValue) String() string { return *e.v }
func (e *enumValue) Type() string   { return strings.Join(e.allowed, "|") }

func (e *enumValue) Set(v string) error {
	for _, a := range e.allowed {
		if strings.EqualFold(v, a) {
			*e.v = a
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", v, strings.Join(e.allowed, ", "))
}
