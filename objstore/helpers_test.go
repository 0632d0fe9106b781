package objstore_test

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/objstore"
)

func TestMain(m *testing.M) {
	natstest.RunIfChild()
	os.Exit(m.Run())
}

// env is the shared JetStream set-up with the store helpers.
type env struct{ testutil.JSEnv }

func newEnv(t testing.TB) *env { return &env{testutil.NewJSEnv(t)} }

func envOn(t testing.TB, s *natstest.Server, url string) *env {
	return &env{testutil.JSEnvOn(t, s, url)}
}

func (e *env) store(t testing.TB, cfg objstore.Config) *objstore.Store {
	t.Helper()
	s, err := objstore.CreateStore(e.Ctx, e.JS, cfg)
	if err != nil {
		t.Fatalf("CreateStore(%s): %v", cfg.Bucket, err)
	}
	return s
}

// chunkMsgs counts the messages on the store's chunk subjects.
func (e *env) chunkMsgs(t testing.TB, bucket string) map[string]uint64 {
	t.Helper()
	st, err := e.JS.Stream(e.Ctx, "OBJ_"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(e.Ctx, jsapi.SubjectsFilter("$O."+bucket+".C.>"))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects
}

// randReader yields n deterministic pseudo-random bytes without holding
// them.
type randReader struct {
	rng *rand.ChaCha8
	n   int64
}

func newRand(seed byte, n int64) *randReader {
	var s [32]byte
	s[0] = seed
	return &randReader{rng: rand.NewChaCha8(s), n: n}
}

func (r *randReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	n, _ := r.rng.Read(p)
	r.n -= int64(n)
	return n, nil
}

// failingReader returns err after n bytes.
type failingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	if int64(len(p)) > f.n {
		p = p[:f.n]
	}
	n, err := f.r.Read(p)
	f.n -= int64(n)
	return n, err
}

var errBroken = errors.New("broken reader")
