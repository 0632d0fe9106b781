package natstest_test

import (
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/natsio/natsio/natstest"
)

// TestFormatCreds: the creds text parses back, with the nats-io/jwt
// parsers, to the user's JWT and seed, and the claims modifiers of NewUser
// were applied before signing.
func TestFormatCreds(t *testing.T) {
	op := natstest.NewOperator()
	u := op.App.NewUser("bob", func(uc *jwt.UserClaims) { uc.Pub.Allow.Add("foo") })
	text := []byte(natstest.FormatCreds(u.JWT, u.Seed))
	if string(text) != u.Text() {
		t.Fatal("UserCreds.Text differs from FormatCreds")
	}
	gotJWT, err := jwt.ParseDecoratedJWT(text)
	if err != nil || gotJWT != u.JWT {
		t.Fatalf("ParseDecoratedJWT = %q, %v", gotJWT, err)
	}
	kp, err := jwt.ParseDecoratedUserNKey(text)
	if err != nil {
		t.Fatal(err)
	}
	if gotSeed, _ := kp.Seed(); string(gotSeed) != string(u.Seed) {
		t.Fatal("seed does not round-trip")
	}
	uc, err := jwt.DecodeUserClaims(u.JWT)
	if err != nil || !uc.Pub.Allow.Contains("foo") || uc.Name != "bob" {
		t.Fatalf("claims: %+v %v", uc, err)
	}
}
