package conn

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/nats-io/nkeys"
)

// ErrBadCredentials reports a credentials or seed file that cannot be used.
// Its text never includes key material.
var ErrBadCredentials = errors.New("nats: invalid credentials")

// secret holds a password or token out of reach of printing: a func value
// prints as an address whatever the verb, and reflection cannot see what
// it captured, so a Conn printed field by field (fmt of a Conn value, a
// debugger's dump) does not show the credential.
type secret func() string

func hide(s string) secret {
	if s == "" {
		return nil
	}
	return func() string { return s }
}

func (s secret) reveal() string {
	if s == nil {
		return ""
	}
	return s()
}

// NKey authenticates with an nkey: pub is the user's public key ("U…") and
// sign signs the server's nonce with the matching seed.
func NKey(pub string, sign NonceSigner) Option {
	return Option{func(o *options) error {
		if pub == "" || sign == nil {
			return invalid("nkey needs a public key and a signer")
		}
		o.nkeyPub, o.signer = pub, sign
		return nil
	}}
}

// NKeyFromSeedFile authenticates with the user nkey seed in path. The file
// is read when the option is applied (to derive the public key) and again
// at each connection attempt to sign; the seed is wiped from memory after
// each use. Connect logs a warning (Logger) when the file is readable by
// its group or by others.
func NKeyFromSeedFile(path string) Option {
	return Option{func(o *options) error {
		kp, err := loadSeedFile(path)
		if err != nil {
			return err
		}
		pub, err := kp.PublicKey()
		kp.Wipe()
		if err != nil {
			return fmt.Errorf("%w: seed file %s", ErrBadCredentials, path)
		}
		o.nkeyPub = pub
		o.secretFiles = append(o.secretFiles, path)
		o.signer = func(nonce []byte) ([]byte, error) {
			kp, err := loadSeedFile(path)
			if err != nil {
				return nil, err
			}
			defer kp.Wipe()
			return kp.Sign(nonce)
		}
		return nil
	}}
}

// UserJWT authenticates with a user JWT returned by jwt (called at every
// connection attempt, so it may rotate) and a signer of the server's nonce.
func UserJWT(jwt func() (string, error), sign NonceSigner) Option {
	return Option{func(o *options) error {
		if jwt == nil || sign == nil {
			return invalid("user JWT needs a JWT callback and a signer")
		}
		o.userJWT, o.signer = jwt, sign
		return nil
	}}
}

// UserCredentials authenticates with a creds file holding a decorated user
// JWT and nkey seed. The file is read at every connection attempt, so a
// rotated file takes effect on the next reconnect; its bytes and the seed
// are wiped after use. Connect logs a warning (Logger) when the file is
// readable by its group or by others.
func UserCredentials(path string) Option {
	return Option{func(o *options) error {
		// Fail early on a file that cannot work.
		if _, err := credsJWT(path); err != nil {
			return err
		}
		o.userJWT = func() (string, error) { return credsJWT(path) }
		o.secretFiles = append(o.secretFiles, path)
		o.signer = func(nonce []byte) ([]byte, error) {
			kp, err := credsKeyPair(path)
			if err != nil {
				return nil, err
			}
			defer kp.Wipe()
			return kp.Sign(nonce)
		}
		return nil
	}}
}

// warnReadableSecrets logs a warning for each seed or creds file that its
// group or others may read: a seed is the user's identity, and should be
// readable by its owner only (mode 0600 or stricter). Windows has no such
// mode bits.
func (o *options) warnReadableSecrets() {
	if runtime.GOOS == "windows" {
		return
	}
	for _, path := range o.secretFiles {
		fi, err := os.Stat(path)
		if err != nil {
			continue // reading it will fail with ErrBadCredentials
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			o.logger.Warn("nats: credentials file readable by group or others; restrict it to its owner (chmod 600)",
				"path", path, "mode", perm.String())
		}
	}
}

func readSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadCredentials, path, errors.Unwrap(err))
	}
	return b, nil
}

func wipe(b []byte) {
	for i := range b {
		b[i] = 'x'
	}
}

func loadSeedFile(path string) (nkeys.KeyPair, error) {
	b, err := readSecret(path)
	if err != nil {
		return nil, err
	}
	defer wipe(b)
	kp, err := nkeys.ParseDecoratedNKey(b)
	if err != nil {
		return nil, fmt.Errorf("%w: no nkey seed in %s", ErrBadCredentials, path)
	}
	return checkUserKey(kp, path)
}

func checkUserKey(kp nkeys.KeyPair, path string) (nkeys.KeyPair, error) {
	pub, err := kp.PublicKey()
	if err != nil || !nkeys.IsValidPublicUserKey(pub) {
		kp.Wipe()
		return nil, fmt.Errorf("%w: %s does not hold a user nkey", ErrBadCredentials, path)
	}
	return kp, nil
}

func credsJWT(path string) (string, error) {
	b, err := readSecret(path)
	if err != nil {
		return "", err
	}
	defer wipe(b)
	jwt, err := nkeys.ParseDecoratedJWT(b)
	// Without a decorated JWT block the parser returns the whole file, which
	// may be a seed: never send anything that is not shaped like a JWT.
	if err != nil || !looksLikeJWT(jwt) {
		return "", fmt.Errorf("%w: no user JWT in %s", ErrBadCredentials, path)
	}
	// ParseDecoratedJWT may return a view of b; copy before b is wiped.
	return string([]byte(jwt)), nil
}

func credsKeyPair(path string) (nkeys.KeyPair, error) {
	b, err := readSecret(path)
	if err != nil {
		return nil, err
	}
	defer wipe(b)
	kp, err := nkeys.ParseDecoratedNKey(b)
	if err != nil {
		return nil, fmt.Errorf("%w: no nkey seed in %s", ErrBadCredentials, path)
	}
	return checkUserKey(kp, path)
}

// signNonce signs nonce with the configured signer, base64url without
// padding as the server expects.
func (o *options) signNonce(nonce string) (string, error) {
	sig, err := o.signer([]byte(nonce))
	if err != nil {
		return "", fmt.Errorf("%w: signing nonce: %v", ErrBadCredentials, err)
	}
	return base64.RawURLEncoding.EncodeToString(sig), nil
}

// looksLikeJWT reports whether s has the shape of a JWT: three non-empty
// base64url parts separated by dots.
func looksLikeJWT(s string) bool {
	parts := 0
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if n == 0 {
				return false
			}
			parts++
			n = 0
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '=':
			n++
		default:
			return false
		}
	}
	return parts == 2 && n > 0
}
