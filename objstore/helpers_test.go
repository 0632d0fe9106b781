package objstore_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/objstore"
)

func TestMain(m *testing.M) {
	natstest.RunIfChild()
	os.Exit(m.Run())
}

type env struct {
	s   *natstest.Server
	nc  *conn.Conn
	js  *jsapi.JS
	ctx context.Context
}

func newEnv(t testing.TB) *env {
	t.Helper()
	s := natstest.NewServer(t)
	return envOn(t, s, s.URL())
}

func envOn(t testing.TB, s *natstest.Server, url string) *env {
	t.Helper()
	j := testutil.JSEnvOn(t, s, url)
	return &env{s: j.Server, nc: j.Conn, js: j.JS, ctx: j.Ctx}
}

func (e *env) store(t testing.TB, cfg objstore.Config) *objstore.Store {
	t.Helper()
	s, err := objstore.CreateStore(e.ctx, e.js, cfg)
	if err != nil {
		t.Fatalf("CreateStore(%s): %v", cfg.Bucket, err)
	}
	return s
}

// chunkMsgs counts the messages on the store's chunk subjects.
func (e *env) chunkMsgs(t testing.TB, bucket string) map[string]uint64 {
	t.Helper()
	st, err := e.js.Stream(e.ctx, "OBJ_"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(e.ctx, jsapi.SubjectsFilter("$O."+bucket+".C.>"))
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
