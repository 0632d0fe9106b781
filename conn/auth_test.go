package conn_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
)

// connectErr runs Connect expecting failure; it closes a connection that
// unexpectedly succeeds and reports that as a nil error.
func connectErr(t *testing.T, url string, opts ...conn.Option) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, url, opts...)
	if err == nil {
		nc.Close()
	}
	return err
}

// withUserinfo puts userinfo (already "user:pass" or "token") into a
// nats:// URL.
func withUserinfo(url, userinfo string) string {
	return strings.Replace(url, "://", "://"+userinfo+"@", 1)
}

// roundTrip checks that nc works: a request to its own responder.
func roundTrip(t *testing.T, nc *conn.Conn, subject string) {
	t.Helper()
	sub, err := nc.SubscribeFunc(subject, func(m *conn.Msg) { m.Respond(append([]byte("re:"), m.Data...)) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	r, err := nc.Request(ctxT(t), subject, []byte("hi"))
	if err != nil || string(r.Data) != "re:hi" {
		t.Fatalf("request on %s: %v %v", subject, r, err)
	}
}

// assertNoSecret fails if any of texts contains any of secrets.
func assertNoSecret(t *testing.T, what string, texts []string, secrets ...string) {
	t.Helper()
	for _, txt := range texts {
		for _, s := range secrets {
			if s != "" && strings.Contains(txt, s) {
				t.Fatalf("%s contains a secret (%.6s…): %q", what, s, txt)
			}
		}
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestAuthUserPassword(t *testing.T) {
	const user, pass, wrong = "alice", "p4ss-w0rd-a1", "wr0ng-pass-77"
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.UserPassword(user, pass))

	t.Run("Option", func(t *testing.T) {
		roundTrip(t, connect(t, s.URL(), conn.UserInfo(user, pass)), "up.opt")
	})
	t.Run("URL", func(t *testing.T) {
		nc := connect(t, withUserinfo(s.URL(), user+":"+pass))
		roundTrip(t, nc, "up.url")
		assertNoSecret(t, "URLs", append(nc.Servers(), nc.ConnectedURL()), pass)
		if nc.ConnectedURL() != s.URL() {
			t.Fatalf("ConnectedURL %q, want %q", nc.ConnectedURL(), s.URL())
		}
	})
	t.Run("OptionOverridesURL", func(t *testing.T) {
		roundTrip(t, connect(t, withUserinfo(s.URL(), user+":"+wrong), conn.UserInfo(user, pass)), "up.over")
	})
	for name, tc := range map[string]struct {
		url  string
		opts []conn.Option
	}{
		"WrongPasswordOption": {s.URL(), []conn.Option{conn.UserInfo(user, wrong)}},
		"WrongPasswordURL":    {withUserinfo(s.URL(), user+":"+wrong), nil},
		"WrongUser":           {s.URL(), []conn.Option{conn.UserInfo("mallory", pass)}},
		"NoCredentials":       {s.URL(), nil},
	} {
		t.Run(name, func(t *testing.T) {
			err := connectErr(t, tc.url, tc.opts...)
			if !errors.Is(err, conn.ErrAuthorization) {
				t.Fatalf("got %v, want ErrAuthorization", err)
			}
			var se *conn.ServerError
			if !errors.As(err, &se) || !se.Fatal() {
				t.Fatalf("want a fatal *ServerError in %v", err)
			}
			assertNoSecret(t, "error", []string{err.Error()}, pass, wrong)
		})
	}
}

func TestAuthToken(t *testing.T) {
	const token, wrong = "t0ken-s3cret-42", "t0ken-wr0ng-13"
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.Token(token))
	t.Run("Option", func(t *testing.T) {
		roundTrip(t, connect(t, s.URL(), conn.Token(token)), "tok.opt")
	})
	t.Run("URL", func(t *testing.T) {
		nc := connect(t, withUserinfo(s.URL(), token))
		roundTrip(t, nc, "tok.url")
		assertNoSecret(t, "URLs", append(nc.Servers(), nc.ConnectedURL()), token)
	})
	t.Run("OptionOverridesURL", func(t *testing.T) {
		roundTrip(t, connect(t, withUserinfo(s.URL(), wrong), conn.Token(token)), "tok.over")
	})
	for name, tc := range map[string]struct {
		url  string
		opts []conn.Option
	}{
		"WrongOption":   {s.URL(), []conn.Option{conn.Token(wrong)}},
		"WrongURL":      {withUserinfo(s.URL(), wrong), nil},
		"NoCredentials": {s.URL(), nil},
	} {
		t.Run(name, func(t *testing.T) {
			err := connectErr(t, tc.url, tc.opts...)
			if !errors.Is(err, conn.ErrAuthorization) {
				t.Fatalf("got %v, want ErrAuthorization", err)
			}
			assertNoSecret(t, "error", []string{err.Error()}, token, wrong)
		})
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNKeyAuth(t *testing.T) {
	seed, pub := nkeyPair()
	otherSeed, _ := nkeyPair()
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.NKeyUsers(pub))

	t.Run("SeedFile", func(t *testing.T) {
		path := writeFile(t, "user.nk", append(append([]byte(nil), seed...), '\n'))
		roundTrip(t, connect(t, s.URL(), conn.NKeyFromSeedFile(path)), "nk.file")
	})
	t.Run("Signer", func(t *testing.T) {
		kp, err := nkeys.FromSeed(seed)
		if err != nil {
			t.Fatal(err)
		}
		var calls atomic.Int32
		sign := func(nonce []byte) ([]byte, error) { calls.Add(1); return kp.Sign(nonce) }
		roundTrip(t, connect(t, s.URL(), conn.NKey(pub, sign)), "nk.sign")
		if calls.Load() != 1 {
			t.Fatalf("signer called %d times, want 1", calls.Load())
		}
	})
	t.Run("WrongSigner", func(t *testing.T) {
		kp, _ := nkeys.FromSeed(otherSeed)
		err := connectErr(t, s.URL(), conn.NKey(pub, kp.Sign))
		if !errors.Is(err, conn.ErrAuthorization) {
			t.Fatalf("got %v, want ErrAuthorization", err)
		}
	})
	t.Run("SignerError", func(t *testing.T) {
		err := connectErr(t, s.URL(), conn.NKey(pub, func([]byte) ([]byte, error) { return nil, errors.New("hsm offline") }))
		if !errors.Is(err, conn.ErrBadCredentials) {
			t.Fatalf("got %v, want ErrBadCredentials", err)
		}
	})
	t.Run("UnknownKey", func(t *testing.T) {
		path := writeFile(t, "other.nk", otherSeed)
		err := connectErr(t, s.URL(), conn.NKeyFromSeedFile(path))
		if !errors.Is(err, conn.ErrAuthorization) {
			t.Fatalf("got %v, want ErrAuthorization", err)
		}
		assertNoSecret(t, "error", []string{err.Error()}, string(otherSeed))
	})
	t.Run("BadSeedFiles", func(t *testing.T) {
		akp, _ := nkeys.CreateAccount()
		aseed, _ := akp.Seed()
		corrupt := bytes.Clone(seed)
		corrupt[10] ^= 1
		for name, data := range map[string][]byte{
			"Empty":       nil,
			"Garbage":     []byte("not a seed at all\n"),
			"AccountSeed": aseed,
			"Corrupt":     corrupt,
		} {
			t.Run(name, func(t *testing.T) {
				path := writeFile(t, "bad.nk", data)
				err := connectErr(t, s.URL(), conn.NKeyFromSeedFile(path))
				if !errors.Is(err, conn.ErrBadCredentials) {
					t.Fatalf("got %v, want ErrBadCredentials", err)
				}
				assertNoSecret(t, "error", []string{err.Error()}, string(aseed), string(corrupt), string(seed))
			})
		}
		err := connectErr(t, s.URL(), conn.NKeyFromSeedFile(filepath.Join(t.TempDir(), "missing.nk")))
		if !errors.Is(err, conn.ErrBadCredentials) {
			t.Fatalf("missing file: got %v, want ErrBadCredentials", err)
		}
	})
}

// TestNKeySeedFileReadAtEachAttempt: the seed file is read again to sign at
// every reconnect, so a missing file fails the attempt and a restored one
// lets the client back in.
func TestNKeySeedFileReadAtEachAttempt(t *testing.T) {
	seed, pub := nkeyPair()
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.NKeyUsers(pub))
	path := writeFile(t, "user.nk", seed)
	nc := connect(t, s.URL(), conn.NKeyFromSeedFile(path), testutil.FastReconnect())
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconnect attempts failing for the missing seed", func() bool {
		return errors.Is(nc.Err(), conn.ErrBadCredentials)
	})
	if nc.IsConnected() {
		t.Fatal("reconnected without a seed")
	}
	if err := os.WriteFile(path, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconnect once the seed is back", nc.IsConnected)
	roundTrip(t, nc, "nk.back")
}

// nkeyPair makes a user nkey: its seed and public key.
func nkeyPair() (seed []byte, pub string) {
	u := natstest.NewNKeyUser()
	return u.Seed, u.PublicKey
}

// jwtUser makes a user of account a: its JWT and nkey seed.
func jwtUser(a *natstest.OperatorAccount, name string) (userJWT string, seed []byte) {
	u := a.NewUser(name)
	return u.JWT, u.Seed
}

// jwtServer starts a server in operator mode.
func jwtServer(t *testing.T) (*natstest.Server, *natstest.Operator) {
	t.Helper()
	op := natstest.NewOperator()
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.ConfigText(op.Config()))
	return s, op
}

func TestJWTUserCredentials(t *testing.T) {
	s, op := jwtServer(t)
	creds := op.App.NewUser("bob").File(t)
	nc := connect(t, s.URL(), conn.UserCredentials(creds), testutil.FastReconnect())
	roundTrip(t, nc, "jwt.creds")
	// The file is read again at the reconnect.
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconnect with the creds file", func() bool { return nc.Stats().Reconnects == 1 && nc.IsConnected() })
	roundTrip(t, nc, "jwt.creds2")
}

func TestJWTUserCallbackCalledOnReconnect(t *testing.T) {
	s, op := jwtServer(t)
	userJWT, seed := jwtUser(op.App, "carol")
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	var calls, signs atomic.Int32
	jwtFn := func() (string, error) { calls.Add(1); return userJWT, nil }
	sign := func(n []byte) ([]byte, error) { signs.Add(1); return kp.Sign(n) }
	nc := connect(t, s.URL(), conn.UserJWT(jwtFn, sign), testutil.FastReconnect())
	if calls.Load() != 1 || signs.Load() != 1 {
		t.Fatalf("after connect: jwt callback %d, signer %d calls; want 1 and 1", calls.Load(), signs.Load())
	}
	roundTrip(t, nc, "jwt.cb")
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconnect", func() bool { return nc.Stats().Reconnects == 1 && nc.IsConnected() })
	if calls.Load() < 2 || signs.Load() < 2 {
		t.Fatalf("after reconnect: jwt callback %d, signer %d calls; want ≥ 2", calls.Load(), signs.Load())
	}
	roundTrip(t, nc, "jwt.cb2")

	t.Run("CallbackError", func(t *testing.T) {
		err := connectErr(t, s.URL(), conn.UserJWT(func() (string, error) { return "", errors.New("vault sealed") }, kp.Sign))
		if !errors.Is(err, conn.ErrBadCredentials) {
			t.Fatalf("got %v, want ErrBadCredentials", err)
		}
	})
	t.Run("WrongSigner", func(t *testing.T) {
		other, _ := nkeys.CreateUser()
		err := connectErr(t, s.URL(), conn.UserJWT(func() (string, error) { return userJWT, nil }, other.Sign))
		if !errors.Is(err, conn.ErrAuthorization) {
			t.Fatalf("got %v, want ErrAuthorization", err)
		}
	})
}

func TestJWTBadCredsFiles(t *testing.T) {
	s, op := jwtServer(t)
	userJWT, seed := jwtUser(op.App, "dave")
	_, otherSeed := jwtUser(op.App, "eve")
	aseed, err := op.App.Key.Seed()
	if err != nil {
		t.Fatal(err)
	}
	corrupt := bytes.Clone(seed)
	corrupt[12] ^= 1
	jwtOnly := strings.Split(natstest.FormatCreds(userJWT, seed), "*****")[0]
	secrets := []string{userJWT, string(seed), string(otherSeed), string(aseed), string(corrupt)}

	for name, tc := range map[string]struct {
		content string
		want    error
	}{
		"Empty":       {"", conn.ErrBadCredentials},
		"Garbage":     {"this is not a creds file\n", conn.ErrBadCredentials},
		"JWTOnly":     {jwtOnly, conn.ErrBadCredentials},
		"CorruptSeed": {natstest.FormatCreds(userJWT, corrupt), conn.ErrBadCredentials},
		// The seed of the account, not of a user: refused before signing.
		"AccountSeed": {natstest.FormatCreds(userJWT, aseed), conn.ErrBadCredentials},
		// A well-formed file whose seed does not match the JWT: the
		// server rejects the signature.
		"MismatchedSeed": {natstest.FormatCreds(userJWT, otherSeed), conn.ErrAuthorization},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, "bad.creds", []byte(tc.content))
			err := connectErr(t, s.URL(), conn.UserCredentials(path))
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			assertNoSecret(t, "error", []string{err.Error()}, secrets...)
		})
	}
	t.Run("Missing", func(t *testing.T) {
		err := connectErr(t, s.URL(), conn.UserCredentials(filepath.Join(t.TempDir(), "nope.creds")))
		if !errors.Is(err, conn.ErrBadCredentials) {
			t.Fatalf("got %v, want ErrBadCredentials", err)
		}
	})
}

// TestCredsFileWithoutJWTNotSent: a "creds" file that holds only a seed
// (a common mix-up with an nkey seed file) must be refused locally; the
// seed must never be sent to the server.
func TestCredsFileWithoutJWTNotSent(t *testing.T) {
	seed, _ := nkeyPair()
	f := newConnectRecorder(t, map[string]any{"auth_required": true, "nonce": "bm9uY2UtMTIzNDU2"})
	f.reject = true
	f.start()
	path := writeFile(t, "seed-only.creds", append(bytes.Clone(seed), '\n'))
	err := connectErr(t, f.url(), conn.UserCredentials(path))
	select {
	case m := <-f.connects:
		if strings.Contains(m["jwt"].(string), string(seed)) {
			t.Errorf("the seed was sent to the server in CONNECT jwt")
		} else {
			t.Errorf("a CONNECT was sent for an unusable creds file: %v", m)
		}
	default:
	}
	if !errors.Is(err, conn.ErrBadCredentials) {
		t.Fatalf("got %v, want ErrBadCredentials", err)
	}
	assertNoSecret(t, "error", []string{err.Error()}, string(seed))
}

// lockedBuf is a bytes.Buffer safe for a logger writing from several
// goroutines while the test reads it.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAuthSecretsNeverLogged runs every credential kind through connect, a
// failed authentication, a server restart and reconnect and close with a
// debug logger, and checks logs, events and errors for the secrets.
func TestAuthSecretsNeverLogged(t *testing.T) {
	var buf lockedBuf
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client log:\n%s", buf.String())
		}
	})
	logger := conn.Logger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	var rec testutil.Events
	var errs []string
	fail := func(url string, opts ...conn.Option) {
		t.Helper()
		err := connectErr(t, url, append(opts, logger, rec.Opt())...)
		if err == nil {
			t.Fatalf("connect to %s with bad credentials succeeded", url)
		}
		errs = append(errs, err.Error())
	}
	var conns []*conn.Conn
	live := func(url string, opts ...conn.Option) {
		t.Helper()
		conns = append(conns, connect(t, url, append(opts, logger, rec.Opt(), testutil.FastReconnect())...))
	}

	const user, pass, wrongPass = "sam", "sam-pa55-f00d", "sam-wr0ng-beef"
	const token, wrongToken = "tok-c0ffee-99", "tok-dead-00"
	seed, pub := nkeyPair()
	wrongSeed, _ := nkeyPair()

	sUP := natstest.NewServer(t, natstest.JetStream(false), natstest.UserPassword(user, pass))
	sTok := natstest.NewServer(t, natstest.JetStream(false), natstest.Token(token))
	sNK := natstest.NewServer(t, natstest.JetStream(false), natstest.NKeyUsers(pub))
	sJWT, op := jwtServer(t)
	userJWT, credSeed := jwtUser(op.App, "logme")
	creds := (&natstest.UserCreds{JWT: userJWT, Seed: credSeed}).File(t)
	secrets := []string{pass, wrongPass, token, wrongToken, string(seed), string(wrongSeed), userJWT, string(credSeed), string(credSeed[:20])}

	live(withUserinfo(sUP.URL(), user+":"+pass))
	live(sUP.URL(), conn.UserInfo(user, pass))
	live(withUserinfo(sTok.URL(), token))
	live(sTok.URL(), conn.Token(token))
	live(sNK.URL(), conn.NKeyFromSeedFile(writeFile(t, "u.nk", seed)))
	live(sJWT.URL(), conn.UserCredentials(creds))

	fail(withUserinfo(sUP.URL(), user+":"+wrongPass))
	fail(sUP.URL(), conn.UserInfo(user, wrongPass))
	fail(withUserinfo(sTok.URL(), wrongToken))
	fail(sTok.URL(), conn.Token(wrongToken))
	fail(sNK.URL(), conn.NKeyFromSeedFile(writeFile(t, "w.nk", wrongSeed)))
	fail(sJWT.URL(), conn.UserCredentials((&natstest.UserCreds{JWT: userJWT, Seed: wrongSeed}).File(t)))
	fail(sJWT.URL(), conn.UserCredentials(writeFile(t, "c.creds", []byte(natstest.FormatCreds(userJWT, credSeed[:20])))))

	for _, s := range []*natstest.Server{sUP, sTok, sNK, sJWT} {
		if err := s.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	for i, nc := range conns {
		eventually(t, "reconnect", func() bool { return nc.Stats().Reconnects == 1 && nc.IsConnected() })
		roundTrip(t, nc, "logs."+string(rune('a'+i)))
	}

	for _, nc := range conns {
		errs = append(errs, errorText(nc.Err()))
	}

	// Reconnect attempts that fail authentication are logged: bring the
	// user/password and token servers back on their ports with other
	// secrets. (A server that rejects the same credentials twice is dropped
	// from the pool, so these connections may end up closed.)
	for _, sw := range []struct {
		s     *natstest.Server
		other natstest.Option
	}{
		{sUP, natstest.UserPassword(user, "rotated-pass")},
		{sTok, natstest.Token("rotated-token")},
	} {
		port := sw.s.Port()
		sw.s.Shutdown()
		natstest.NewServer(t, natstest.JetStream(false), sw.other, natstest.Configure(func(o *server.Options) { o.Port = port }))
		eventually(t, "a logged authorization failure", func() bool {
			return strings.Contains(buf.String(), "127.0.0.1:"+strconv.Itoa(port)+" err=\"nats: authorization violation")
		})
	}
	for _, nc := range conns {
		errs = append(errs, errorText(nc.Err()))
		nc.Close()
	}
	for _, e := range rec.All() {
		errs = append(errs, errorText(e.Err), e.Server)
	}
	logs := buf.String()
	if !strings.Contains(logs, "reconnected") || !strings.Contains(logs, "level=DEBUG") && !strings.Contains(logs, "level=INFO") {
		t.Fatalf("logger captured nothing useful:\n%s", logs)
	}
	if testing.Verbose() {
		t.Log(logs)
	}
	assertNoSecret(t, "log output", []string{logs}, secrets...)
	assertNoSecret(t, "errors and events", errs, secrets...)
}
