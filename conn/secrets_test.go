package conn_test

// Secret hygiene: printing a connection shows no credential, and a seed or
// creds file others can read is reported.

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
)

// TestConnFormatHidesSecrets prints connections configured with each kind
// of credential in every common form: the *Conn with every verb, the Conn
// value behind it (which no method of *Conn can intercept), and a struct
// holding the pointer. None shows a password, token, JWT or seed; the
// pointer's form names the server without its user information.
func TestConnFormatHidesSecrets(t *testing.T) {
	const user, pass, token = "alice", "p4ss-w0rd-f0rmat", "t0ken-f0rmat-s3cret"
	sPass := natstest.NewServer(t, natstest.JetStream(false), natstest.UserPassword(user, pass))
	sToken := natstest.NewServer(t, natstest.JetStream(false), natstest.Token(token))
	seed, pub := nkeyPair()
	sNKey := natstest.NewServer(t, natstest.JetStream(false), natstest.NKeyUsers(pub))
	sJWT, op := jwtServer(t)
	userJWT, jwtSeed := jwtUser(op.App, "printed")
	creds := (&natstest.UserCreds{JWT: userJWT, Seed: jwtSeed}).File(t)
	secrets := []string{pass, token, string(seed), userJWT, string(jwtSeed)}

	for _, tc := range []struct {
		name string
		url  string
		opts []conn.Option
	}{
		{"password option", sPass.URL(), []conn.Option{conn.UserInfo(user, pass)}},
		{"password in URL", withUserinfo(sPass.URL(), user+":"+pass), nil},
		{"token option", sToken.URL(), []conn.Option{conn.Token(token)}},
		{"token in URL", withUserinfo(sToken.URL(), token), nil},
		{"seed file", sNKey.URL(), []conn.Option{conn.NKeyFromSeedFile(writeFile(t, "u.nk", seed))}},
		{"creds file", sJWT.URL(), []conn.Option{conn.UserCredentials(creds)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := connect(t, tc.url, append(tc.opts, conn.Name("printed"))...)
			verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"}
			var out []string
			for _, verb := range verbs {
				out = append(out,
					fmt.Sprintf(verb, nc),
					fmt.Sprintf(verb, struct{ C *conn.Conn }{nc}),
					fmt.Sprintf(verb, []any{nc}))
			}
			out = append(out, nc.String(), nc.GoString(), fmt.Sprint(nc), fmt.Sprintln(nc))
			assertNoSecret(t, "printed connection", out, secrets...)
			want := `nats connection "printed" to ` + strings.Replace(tc.url, user+":"+pass+"@", "", 1)
			want = strings.Replace(want, token+"@", "", 1) + " (connected)"
			// String never waits for the connection's lock: while another
			// goroutine holds it (the reader just after connecting), it
			// prints the name alone. Either form, and the full one once the
			// lock is free.
			var got string
			testutil.Eventually(t, "the full form of %+v", func() bool {
				got = fmt.Sprintf("%+v", nc)
				if got != want && got != `nats connection "printed"` {
					t.Fatalf("%%+v = %q, want %q", got, want)
				}
				return got == want
			})
			// The Conn value behind the pointer, which no method of *Conn
			// can intercept, printed field by field (after Close: reading
			// the fields of a live connection would race with it).
			nc.Close()
			out = out[:0]
			for _, verb := range verbs {
				out = append(out, fmt.Sprintf(verb, reflect.ValueOf(nc).Elem()))
			}
			assertNoSecret(t, "printed Conn value", out, secrets...)
		})
	}
	var nilConn *conn.Conn
	if got := fmt.Sprintf("%v", nilConn); got != "<nil>" {
		t.Fatalf("nil *Conn printed %q", got)
	}
}

// logRecords collects the records of a slog.Logger.
type logRecords struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logRecords) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *logRecords) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logRecords) warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.Lines(l.buf.String()) {
		if strings.Contains(line, "level=WARN") {
			out = append(out, line)
		}
	}
	return out
}

// TestReadableSecretFileWarned: a seed or creds file its group or others
// may read makes Connect log a warning naming the file (not its content);
// one readable by its owner only does not.
func TestReadableSecretFileWarned(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permission bits")
	}
	seed, pub := nkeyPair()
	sNKey := natstest.NewServer(t, natstest.JetStream(false), natstest.NKeyUsers(pub))
	sJWT, op := jwtServer(t)
	userJWT, jwtSeed := jwtUser(op.App, "warned")
	for _, tc := range []struct {
		name   string
		url    string
		data   []byte
		option func(path string) conn.Option
	}{
		{"seed file", sNKey.URL(), seed, conn.NKeyFromSeedFile},
		{"creds file", sJWT.URL(), []byte(natstest.FormatCreds(userJWT, jwtSeed)), conn.UserCredentials},
	} {
		for _, mode := range []os.FileMode{0o600, 0o400, 0o640, 0o604, 0o644} {
			t.Run(fmt.Sprintf("%s %v", tc.name, mode), func(t *testing.T) {
				path := writeFile(t, "secret", tc.data)
				if err := os.Chmod(path, mode); err != nil {
					t.Fatal(err)
				}
				var logs logRecords
				connect(t, tc.url, tc.option(path), conn.Logger(logs.logger()))
				warned := logs.warnings()
				assertNoSecret(t, "log", warned, string(seed), userJWT, string(jwtSeed))
				if mode&0o077 == 0 {
					if len(warned) != 0 {
						t.Fatalf("mode %v warned: %q", mode, warned)
					}
					return
				}
				if len(warned) != 1 || !strings.Contains(warned[0], path) || !strings.Contains(warned[0], "readable by group or others") {
					t.Fatalf("mode %v: warnings %q, want one naming %s", mode, warned, path)
				}
			})
		}
	}
}
