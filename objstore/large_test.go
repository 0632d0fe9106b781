package objstore_test

import (
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/objstore"
)

// hashingReader hashes what it reads.
type hashingReader struct {
	r io.Reader
	h hash.Hash
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	return n, err
}

func sumDigest(h hash.Hash) string {
	return "SHA-256=" + base64.URLEncoding.EncodeToString(h.Sum(nil))
}

// roundTrip puts size pseudo-random bytes and reads them back, checking
// the digest on both sides.
func roundTrip(t *testing.T, s *objstore.Store, e *env, size int64) {
	t.Helper()
	src := &hashingReader{r: newRand(7, size), h: sha256.New()}
	start := time.Now()
	info, err := s.Put(e.Ctx, objstore.Meta{Name: "large"}, src)
	if err != nil {
		t.Fatal(err)
	}
	put := time.Since(start)
	want := sumDigest(src.h)
	if info.Size != uint64(size) || info.Digest != want || info.Chunks != uint32((size+objstore.DefaultChunkSize-1)/objstore.DefaultChunkSize) {
		t.Fatalf("put info %+v, want digest %s", info, want)
	}
	start = time.Now()
	r, err := s.Get(e.Ctx, "large")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil || n != size || sumDigest(h) != want {
		t.Fatalf("read %d bytes (%v), digest %s", n, err, sumDigest(h))
	}
	get := time.Since(start)
	mb := float64(size) / (1 << 20)
	t.Logf("%.0f MiB: put %v (%.0f MiB/s), get %v (%.0f MiB/s)", mb, put, mb/put.Seconds(), get, mb/get.Seconds())
}

func TestLargeObject64MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB")
	}
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "large"})
	roundTrip(t, s, e, 64<<20)
}

// TestBoundedMemory streams a 256 MiB object in and out (server in a child
// process) while sampling the heap: the client never holds more than a
// small fraction of the object.
func TestBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("256 MiB")
	}
	p := natstest.NewProcess(t, true)
	e := envOn(t, nil, p.URL())
	s := e.store(t, objstore.Config{Bucket: "mem"})
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	}()
	const size = 256 << 20
	roundTrip(t, s, e, size)
	close(stop)
	wg.Wait()
	grew := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("heap in use: %d MiB before, peak %d MiB (+%d MiB) for a %d MiB object",
		base.HeapInuse>>20, peak.Load()>>20, grew>>20, size>>20)
	if grew > size/4 {
		t.Fatalf("heap grew by %d MiB streaming a %d MiB object", grew>>20, size>>20)
	}
}
