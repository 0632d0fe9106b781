package objstore

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/natsio/natsio/internal/fuzzref"
	"github.com/natsio/natsio/internal/streamstore"
	"github.com/natsio/natsio/jsapi"
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
		if len(data) > fuzzref.MaxInput {
			data = data[:fuzzref.MaxInput]
		}
		if ValidateStoreName(bucket) != nil || name == "" {
			return // no store, or a name every call refuses first
		}
		nuid, subj, listed, err := objectMeta(bucket, name, data)

		var info Info
		jerr := json.Unmarshal(data, &info)
		ok := jerr == nil && info.Name == name && info.Bucket == bucket && fuzzref.NUID(info.NUID)
		if (err == nil) != ok {
			t.Fatalf("bucket %q name %q meta %q: %v; the reference says valid=%v", bucket, name, data, err, ok)
		}
		if listed != ok {
			t.Fatalf("bucket %q name %q meta %q: listed=%v, GetInfo error %v", bucket, name, data, listed, err)
		}
		if err != nil {
			if !errors.Is(err, ErrBadObjectMeta) || jerr == nil && !errors.Is(err, ErrMetaMismatch) {
				t.Fatalf("meta %q: error %v", data, err)
			}
			return
		}
		if nuid != info.NUID || subj != "$O."+bucket+".C."+nuid || !fuzzref.ValidSubject(subj, false) || !fuzzref.IsLiteral(subj) {
			t.Fatalf("meta %q: NUID %q, chunk subject %q", data, nuid, subj)
		}
	})
}

// objectMeta decodes data as the meta stored for the object name in the
// store bucket, as GetInfo does: on success, the NUID and the chunk subject
// a read or purge would use. listed reports whether List and Watch would
// yield the same message found on name's meta subject.
func objectMeta(bucket, name string, data []byte) (nuid, chunkSubject string, listed bool, err error) {
	s := newStore(nil, bucket, nil)
	m := &jsapi.Msg{}
	m.Subject, m.Data = s.metaSubject(name), data
	_, skip := s.watchInfo(m, jsapi.Metadata{}, streamstore.Spec{})
	listed = !skip
	info, err := s.decodeMeta(data, name)
	if err != nil {
		return "", "", listed, err
	}
	subj, err := s.chunkSubject(info.NUID)
	return info.NUID, subj, listed, err
}
