package kv_test

import (
	"context"
	"iter"
	"os"
	"testing"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/natstest"
)

func TestMain(m *testing.M) {
	natstest.RunIfChild()
	os.Exit(m.Run())
}

// env is the shared JetStream set-up with the bucket helper.
type env struct{ testutil.JSEnv }

// newEnv starts an embedded server and connects to it with a fast
// reconnect.
func newEnv(t testing.TB) *env { return &env{testutil.NewJSEnv(t)} }

func envOn(t testing.TB, s *natstest.Server, url string) *env {
	return &env{testutil.JSEnvOn(t, s, url)}
}

func (e *env) bucket(t testing.TB, cfg kv.Config) *kv.Bucket {
	t.Helper()
	b, err := kv.CreateBucket(e.Ctx, e.JS, cfg)
	if err != nil {
		t.Fatalf("CreateBucket(%s): %v", cfg.Bucket, err)
	}
	return b
}

func mustPut(t testing.TB, b *kv.Bucket, key, value string) uint64 {
	t.Helper()
	rev, err := b.Put(context.Background(), key, []byte(value))
	if err != nil {
		t.Fatalf("Put(%s): %v", key, err)
	}
	return rev
}

// watch steps through a watch of entries.
type watch struct{ *testutil.Watch[kv.Entry] }

// startWatch runs the watch mk returns for a context that Stop (or the
// test's end) cancels.
func startWatch(t testing.TB, mk func(ctx context.Context) iter.Seq2[*kv.Entry, error]) *watch {
	t.Helper()
	return &watch{testutil.StartWatch(t, mk)}
}
