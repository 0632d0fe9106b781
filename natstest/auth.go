package natstest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
	"github.com/natsio/natsio/conn"
)

// Account is an account of the Accounts option: its name, whether it may
// use JetStream (without limits), and the users that log into it.
type Account struct {
	Name      string
	JetStream bool
	Users     []User
}

// User is a user of an Account, logging in with a name and password
// (conn.UserInfo).
type User struct {
	Name     string
	Password string
}

// NKeyUser is a user nkey pair: PublicKey ("U…") goes into NKeyUsers, the
// seed ("SU…") signs the server's nonce.
type NKeyUser struct {
	Seed      []byte
	PublicKey string
}

// NewNKeyUser makes a fresh user nkey pair. It panics only if the system's
// random source fails.
func NewNKeyUser() NKeyUser {
	kp, err := nkeys.CreateUser()
	must(err)
	seed, err := kp.Seed()
	must(err)
	pub, err := kp.PublicKey()
	must(err)
	return NKeyUser{Seed: seed, PublicKey: pub}
}

// Option returns the conn.NKey option that logs in as u.
func (u NKeyUser) Option() conn.Option { return conn.NKey(u.PublicKey, u.Signer()) }

// Signer returns a conn.NonceSigner signing with the seed.
func (u NKeyUser) Signer() conn.NonceSigner {
	seed := append([]byte(nil), u.Seed...)
	return func(nonce []byte) ([]byte, error) {
		kp, err := nkeys.FromSeed(seed)
		if err != nil {
			return nil, err
		}
		defer kp.Wipe()
		return kp.Sign(nonce)
	}
}

// must panics on errors that only a broken random source or a bug can
// cause (key generation, signing JWTs with keys made here).
func must(err error) {
	if err != nil {
		panic("natstest: " + err.Error())
	}
}

// Operator is an operator-mode (decentralised JWT) set-up for OperatorMode:
// an operator key and JWT, a system account "SYS", a JetStream enabled
// application account "APP" and the accounts added with AddAccount. It is
// safe for concurrent use.
type Operator struct {
	Key       nkeys.KeyPair // signs account JWTs
	PublicKey string        // "O…"
	JWT       string        // self-signed operator JWT

	System *OperatorAccount // the system account "SYS"
	App    *OperatorAccount // "APP", JetStream without limits

	mu       sync.Mutex
	accounts []*OperatorAccount
}

// OperatorAccount is an account of an Operator.
type OperatorAccount struct {
	Name      string
	PublicKey string        // "A…": the account name in monitoring and in Cluster.AccountStreamLeader
	Key       nkeys.KeyPair // signs user JWTs
	JWT       string        // account JWT signed by the operator
}

// UserCreds is a user of an OperatorAccount: its JWT and nkey seed.
type UserCreds struct {
	Name string
	JWT  string
	Seed []byte
}

// NewOperator makes an operator with its system account and the "APP"
// account. It panics only if the system's random source fails.
func NewOperator() *Operator {
	okp, err := nkeys.CreateOperator()
	must(err)
	opub, err := okp.PublicKey()
	must(err)
	o := &Operator{Key: okp, PublicKey: opub}
	o.System = o.AddAccount("SYS", false)
	o.App = o.AddAccount("APP", true)

	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "natstest-operator"
	oc.SystemAccount = o.System.PublicKey
	o.JWT, err = oc.Encode(okp)
	must(err)
	return o
}

// AddAccount makes another account signed by the operator; with jetStream
// it may use JetStream without limits. A server knows the accounts that
// existed when it started.
func (o *Operator) AddAccount(name string, jetStream bool) *OperatorAccount {
	akp, err := nkeys.CreateAccount()
	must(err)
	apub, err := akp.PublicKey()
	must(err)
	ac := jwt.NewAccountClaims(apub)
	ac.Name = name
	if jetStream {
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{
			MemoryStorage: jwt.NoLimit,
			DiskStorage:   jwt.NoLimit,
			Streams:       jwt.NoLimit,
			Consumer:      jwt.NoLimit,
		}
	}
	a := &OperatorAccount{Name: name, PublicKey: apub, Key: akp}
	a.JWT, err = ac.Encode(o.Key)
	must(err)
	o.mu.Lock()
	o.accounts = append(o.accounts, a)
	o.mu.Unlock()
	return a
}

// Config returns the nats-server configuration of operator mode with a
// memory resolver preloaded with every account. OperatorMode uses it; it
// is exported for servers started some other way.
func (o *Operator) Config() string {
	o.mu.Lock()
	defer o.mu.Unlock()
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

// NewUser makes a user of account a. Each modify function may change the
// claims (permissions, limits) before they are signed. It panics only if
// the system's random source fails.
func (a *OperatorAccount) NewUser(name string, modify ...func(*jwt.UserClaims)) *UserCreds {
	u := NewNKeyUser()
	uc := jwt.NewUserClaims(u.PublicKey)
	uc.Name = name
	for _, m := range modify {
		m(uc)
	}
	userJWT, err := uc.Encode(a.Key)
	must(err)
	return &UserCreds{Name: name, JWT: userJWT, Seed: u.Seed}
}

// Text returns the user's decorated creds file (FormatCreds).
func (u *UserCreds) Text() string { return FormatCreds(u.JWT, u.Seed) }

// WriteFile writes the creds file to path, readable by the owner only.
func (u *UserCreds) WriteFile(path string) error {
	return os.WriteFile(path, []byte(u.Text()), 0o600)
}

// File writes the creds file into a directory of tb's, removed when the
// test ends, and returns its path for conn.UserCredentials. A failure ends
// the test with tb.Fatalf.
func (u *UserCreds) File(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "user.creds")
	if err := u.WriteFile(path); err != nil {
		tb.Fatalf("natstest: writing creds: %v", err)
	}
	return path
}

// Option returns a conn.UserJWT option that logs in as u from memory.
func (u *UserCreds) Option() conn.Option {
	userJWT := u.JWT
	return conn.UserJWT(func() (string, error) { return userJWT, nil }, NKeyUser{Seed: u.Seed}.Signer())
}

// FormatCreds returns the text of a decorated creds file: the user JWT
// block followed by the user nkey seed block.
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
