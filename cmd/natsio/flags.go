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

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// defaultURL is the server every command connects to without --server or
// NATS_URL: the one `natsio server` starts by default.
const defaultURL = "nats://127.0.0.1:4222"

// connFlags are the connection flags every command accepts.
type connFlags struct {
	server   string
	creds    string
	nkey     string
	user     string
	password string
	token    string
	tlsCert  string
	tlsKey   string
	tlsCA    string
	tlsFirst bool
	timeout  time.Duration
	name     string
}

// env returns the environment variable key, or def when it is unset.
func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

// addGlobalFlags registers the connection and output flags on root; they
// are inherited by every command.
func (a *app) addGlobalFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	c := &a.conn
	f.StringVarP(&c.server, "server", "s", env("NATS_URL", defaultURL), "NATS server URL(s), comma separated ($NATS_URL)")
	f.StringVar(&c.creds, "creds", env("NATS_CREDS", ""), "user credentials (JWT + nkey seed) file ($NATS_CREDS)")
	f.StringVar(&c.nkey, "nkey", env("NATS_NKEY", ""), "user nkey seed file ($NATS_NKEY)")
	f.StringVar(&c.user, "user", env("NATS_USER", ""), "user name ($NATS_USER)")
	f.StringVar(&c.password, "password", env("NATS_PASSWORD", ""), "password ($NATS_PASSWORD)")
	f.StringVar(&c.token, "token", env("NATS_TOKEN", ""), "authentication token ($NATS_TOKEN)")
	f.StringVar(&c.tlsCert, "tlscert", env("NATS_CERT", ""), "TLS client certificate file ($NATS_CERT)")
	f.StringVar(&c.tlsKey, "tlskey", env("NATS_KEY", ""), "TLS client private key file ($NATS_KEY)")
	f.StringVar(&c.tlsCA, "tlsca", env("NATS_CA", ""), "TLS certificate authority file to trust ($NATS_CA)")
	f.BoolVar(&c.tlsFirst, "tlsfirst", false, "perform the TLS handshake before the server's INFO (handshake_first servers)")
	timeout := 5 * time.Second
	if v := env("NATS_TIMEOUT", ""); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			timeout = d
		}
	}
	f.DurationVar(&c.timeout, "timeout", timeout, "time to wait for the connection and for each request ($NATS_TIMEOUT)")
	f.StringVar(&c.name, "name", "natsio", "client name shown in the server's monitoring")
	f.BoolVar(&a.json, "json", false, "print machine-readable JSON instead of tables")
}

// options turns the flags into connection options.
func (c *connFlags) options() ([]conn.Option, error) {
	if c.timeout <= 0 {
		return nil, usageError{err: fmt.Errorf("--timeout must be positive, got %v", c.timeout)}
	}
	opts := []conn.Option{
		conn.Name(c.name),
		conn.ConnectTimeout(c.timeout),
		conn.RequestTimeout(c.timeout),
	}
	if c.password != "" && c.user == "" {
		return nil, usageError{err: errors.New("--password needs --user")}
	}
	if c.user != "" {
		opts = append(opts, conn.UserInfo(c.user, c.password))
	}
	if c.token != "" {
		opts = append(opts, conn.Token(c.token))
	}
	if c.creds != "" {
		opts = append(opts, conn.UserCredentials(c.creds))
	}
	if c.nkey != "" {
		opts = append(opts, conn.NKeyFromSeedFile(c.nkey))
	}
	switch {
	case c.tlsCert != "" && c.tlsKey != "":
		opts = append(opts, conn.ClientCert(c.tlsCert, c.tlsKey))
	case c.tlsCert != "" || c.tlsKey != "":
		return nil, usageError{err: errors.New("--tlscert and --tlskey go together")}
	}
	if c.tlsCA != "" {
		opts = append(opts, conn.RootCAs(c.tlsCA))
	}
	if c.tlsFirst {
		opts = append(opts, conn.TLSHandshakeFirst())
	}
	return opts, nil
}

// connect connects to the server named by the flags. Its errors say what
// failed and what to do (see errors.go).
func (a *app) connect(ctx context.Context) (*conn.Conn, error) {
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
	js, err := jsapi.New(nc, jsapi.Timeout(a.conn.timeout))
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

func (d durationValue) String() string {
	if d.v == nil {
		return "0s"
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
