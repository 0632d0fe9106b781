package fuzz

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/natsio/natsio/internal/fuzzhook"
	"github.com/natsio/natsio/objstore"
)

// FuzzObjectMeta decodes arbitrary bytes as the meta message stored for an
// object name in a store (what GetInfo, and so Get, Delete and Put, read)
// and checks it against a reference: the meta is accepted exactly when it
// is JSON that names that object, that store and a NUID of 22 characters
// of 0-9, A-Z, a-z; the chunk subject built from an accepted NUID is a
// literal subject (no wildcard, no extra token) of the store; a refused
// meta fails with ErrBadObjectMeta (ErrMetaMismatch when it is JSON); and
// List and Watch skip exactly what GetInfo refuses.
func FuzzObjectMeta(f *testing.F) {
	f.Fuzz(func(t *testing.T, bucket, name string, data []byte) {
		if len(data) > maxInput {
			data = data[:maxInput]
		}
		if objstore.ValidateStoreName(bucket) != nil || name == "" {
			return // no store, or a name every call refuses first
		}
		nuid, subj, listed, err := fuzzhook.ObjectMeta(bucket, name, data)

		var info objstore.Info
		jerr := json.Unmarshal(data, &info)
		ok := jerr == nil && info.Name == name && info.Bucket == bucket && refNUID(info.NUID)
		if (err == nil) != ok {
			t.Fatalf("bucket %q name %q meta %q: %v; the reference says valid=%v", bucket, name, data, err, ok)
		}
		if listed != ok {
			t.Fatalf("bucket %q name %q meta %q: listed=%v, GetInfo error %v", bucket, name, data, listed, err)
		}
		if err != nil {
			if !errors.Is(err, objstore.ErrBadObjectMeta) || jerr == nil && !errors.Is(err, objstore.ErrMetaMismatch) {
				t.Fatalf("meta %q: error %v", data, err)
			}
			return
		}
		if nuid != info.NUID || subj != "$O."+bucket+".C."+nuid || !refValidSubject(subj, false) || !refIsLiteral(subj) {
			t.Fatalf("meta %q: NUID %q, chunk subject %q", data, nuid, subj)
		}
	})
}

// refNUID: 22 characters of 0-9, A-Z and a-z (github.com/nats-io/nuid).
func refNUID(s string) bool {
	if len(s) != 22 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z') {
			return false
		}
	}
	return true
}
