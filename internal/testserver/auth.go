package testserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// NKeyUser creates a user nkey pair and returns its seed ("SU...") and
// public key ("U..."). Put pub into Options.NKeys; a client signs the
// server's nonce with the seed.
func NKeyUser(t testing.TB) (seed []byte, pub string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatalf("testserver: creating user nkey: %v", err)
	}
	if seed, err = kp.Seed(); err != nil {
		t.Fatalf("testserver: user nkey seed: %v", err)
	}
	if pub, err = kp.PublicKey(); err != nil {
		t.Fatalf("testserver: user nkey public key: %v", err)
	}
	return seed, pub
}

// Account is an account of an OperatorSetup.
type Account struct {
	Name      string
	PublicKey string        // "A..."
	Key       nkeys.KeyPair // signs user JWTs
	JWT       string        // account JWT signed by the operator
}

// OperatorSetup is a decentralised-auth (operator mode) configuration: an
// operator, a system account "SYS", a JetStream enabled application account
// "APP" and any accounts added with AddAccount. Pass Config() as
// Options.ConfigText and connect with creds from UserCreds.
type OperatorSetup struct {
	Key       nkeys.KeyPair // operator key, signs account JWTs
	PublicKey string        // "O..."
	JWT       string        // self-signed operator JWT

	System  *Account // the system account
	Account *Account // "APP", JetStream enabled without limits

	accounts []*Account
}

// Operator builds an operator with a system account and the "APP" account.
func Operator(t testing.TB) *OperatorSetup {
	t.Helper()
	okp, err := nkeys.CreateOperator()
	if err != nil {
		t.Fatalf("testserver: creating operator key: %v", err)
	}
	opub, err := okp.PublicKey()
	if err != nil {
		t.Fatalf("testserver: operator public key: %v", err)
	}
	o := &OperatorSetup{Key: okp, PublicKey: opub}
	o.System = o.AddAccount(t, "SYS", false)
	o.Account = o.AddAccount(t, "APP", true)

	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "natsio-test-operator"
	oc.SystemAccount = o.System.PublicKey
	if o.JWT, err = oc.Encode(okp); err != nil {
		t.Fatalf("testserver: encoding operator JWT: %v", err)
	}
	return o
}

// AddAccount creates another account signed by the operator. With jetstream
// it gets unlimited JetStream memory and file storage. Accounts must be added
// before Config is used to start a server.
func (o *OperatorSetup) AddAccount(t testing.TB, name string, jetstream bool) *Account {
	t.Helper()
	akp, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatalf("testserver: creating account key: %v", err)
	}
	apub, err := akp.PublicKey()
	if err != nil {
		t.Fatalf("testserver: account public key: %v", err)
	}
	ac := jwt.NewAccountClaims(apub)
	ac.Name = name
	if jetstream {
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{
			MemoryStorage: jwt.NoLimit,
			DiskStorage:   jwt.NoLimit,
			Streams:       jwt.NoLimit,
			Consumer:      jwt.NoLimit,
		}
	}
	a := &Account{Name: name, PublicKey: apub, Key: akp}
	if a.JWT, err = ac.Encode(o.Key); err != nil {
		t.Fatalf("testserver: encoding account JWT: %v", err)
	}
	o.accounts = append(o.accounts, a)
	return a
}

// Config returns nats-server configuration for operator mode with a memory
// resolver preloaded with all accounts, suitable for Options.ConfigText
// (more configuration may be appended to it).
func (o *OperatorSetup) Config() string {
	var b strings.Builder
	fmt.Fprintf(&b, "operator: %q\n", o.JWT)
	fmt.Fprintf(&b, "system_account: %q\n", o.System.PublicKey)
	b.WriteString("resolver: MEMORY\n")
	b.WriteString("resolver_preload: {\n")
	for _, a := range o.accounts {
		fmt.Fprintf(&b, "  %s: %q\n", a.PublicKey, a.JWT)
	}
	b.WriteString("}\n")
	return b.String()
}

// UserCreds creates a user in the "APP" account and writes its creds file,
// returning the path. Modifiers may adjust the claims (permissions, limits)
// before they are signed.
func (o *OperatorSetup) UserCreds(t testing.TB, name string, modify ...func(*jwt.UserClaims)) string {
	t.Helper()
	return o.Account.UserCreds(t, name, modify...)
}

// UserCreds creates a user in account a and writes its creds file,
// returning the path.
func (a *Account) UserCreds(t testing.TB, name string, modify ...func(*jwt.UserClaims)) string {
	t.Helper()
	userJWT, seed := a.User(t, name, modify...)
	return WriteCreds(t, userJWT, seed)
}

// User creates a user in account a and returns its JWT and nkey seed.
func (a *Account) User(t testing.TB, name string, modify ...func(*jwt.UserClaims)) (userJWT string, seed []byte) {
	t.Helper()
	seed, pub := NKeyUser(t)
	uc := jwt.NewUserClaims(pub)
	uc.Name = name
	for _, m := range modify {
		m(uc)
	}
	userJWT, err := uc.Encode(a.Key)
	if err != nil {
		t.Fatalf("testserver: encoding user JWT: %v", err)
	}
	return userJWT, seed
}

// WriteCreds writes a standard decorated creds file (the user JWT block
// followed by the user nkey seed block) into a t.TempDir() and returns its
// path.
func WriteCreds(t testing.TB, userJWT string, seed []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "user.creds")
	if err := os.WriteFile(path, []byte(FormatCreds(userJWT, seed)), 0o600); err != nil {
		t.Fatalf("testserver: writing creds: %v", err)
	}
	return path
}

// FormatCreds returns the text of a decorated creds file.
func FormatCreds(userJWT string, seed []byte) string {
	return "-----BEGIN NATS USER JWT-----\n" +
		userJWT + "\n" +
		"------END NATS USER JWT------\n" +
		"\n" +
		"************************* IMPORTANT *************************\n" +
		"NKEY Seed printed below can be used to sign and prove identity.\n" +
		"NKEYs are sensitive and should be treated as secrets.\n" +
		"\n" +
		"-----BEGIN USER NKEY SEED-----\n" +
		string(seed) + "\n" +
		"------END USER NKEY SEED------\n" +
		"\n" +
		"*************************************************************\n"
}
