package testserver

import (
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
	"github.com/natsio/natsio/natstest"
)

// NKeyUser creates a user nkey pair and returns its seed ("SU...") and
// public key ("U..."). Put pub into Options.NKeys; a client signs the
// server's nonce with the seed.
func NKeyUser(t testing.TB) (seed []byte, pub string) {
	t.Helper()
	u := natstest.NewNKeyUser()
	return u.Seed, u.PublicKey
}

// Account is an account of an OperatorSetup.
type Account struct {
	Name      string
	PublicKey string        // "A..."
	Key       nkeys.KeyPair // signs user JWTs
	JWT       string        // account JWT signed by the operator

	na *natstest.OperatorAccount
}

func account(a *natstest.OperatorAccount) *Account {
	return &Account{Name: a.Name, PublicKey: a.PublicKey, Key: a.Key, JWT: a.JWT, na: a}
}

// OperatorSetup is a decentralised-auth (operator mode) configuration
// (natstest.Operator): an operator, a system account "SYS", a JetStream
// enabled application account "APP" and any accounts added with
// AddAccount. Pass Config() as Options.ConfigText and connect with creds
// from UserCreds.
type OperatorSetup struct {
	Key       nkeys.KeyPair // operator key, signs account JWTs
	PublicKey string        // "O..."
	JWT       string        // self-signed operator JWT

	System  *Account // the system account
	Account *Account // "APP", JetStream enabled without limits

	op *natstest.Operator
}

// Operator builds an operator with a system account and the "APP" account.
func Operator(t testing.TB) *OperatorSetup {
	t.Helper()
	op := natstest.NewOperator()
	return &OperatorSetup{Key: op.Key, PublicKey: op.PublicKey, JWT: op.JWT,
		System: account(op.System), Account: account(op.App), op: op}
}

// AddAccount creates another account signed by the operator. With jetstream
// it gets unlimited JetStream memory and file storage. Accounts must be added
// before Config is used to start a server.
func (o *OperatorSetup) AddAccount(t testing.TB, name string, jetstream bool) *Account {
	t.Helper()
	return account(o.op.AddAccount(name, jetstream))
}

// Config returns nats-server configuration for operator mode with a memory
// resolver preloaded with all accounts, suitable for Options.ConfigText
// (more configuration may be appended to it).
func (o *OperatorSetup) Config() string { return o.op.Config() }

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
	return a.na.NewUser(name, modify...).File(t)
}

// User creates a user in account a and returns its JWT and nkey seed.
func (a *Account) User(t testing.TB, name string, modify ...func(*jwt.UserClaims)) (userJWT string, seed []byte) {
	t.Helper()
	u := a.na.NewUser(name, modify...)
	return u.JWT, u.Seed
}

// WriteCreds writes a standard decorated creds file (the user JWT block
// followed by the user nkey seed block) into a t.TempDir() and returns its
// path.
func WriteCreds(t testing.TB, userJWT string, seed []byte) string {
	t.Helper()
	return (&natstest.UserCreds{JWT: userJWT, Seed: seed}).File(t)
}

// FormatCreds returns the text of a decorated creds file.
func FormatCreds(userJWT string, seed []byte) string { return natstest.FormatCreds(userJWT, seed) }
