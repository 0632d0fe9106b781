package objstore_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/objstore"
)

const benchSize = 64 << 20

func benchStore(b *testing.B, storage jsapi.StorageType) (*env, *objstore.Store, []byte) {
	p := natstest.NewProcess(b, true)
	e := envOn(b, nil, p.URL())
	s, err := objstore.CreateStore(e.Ctx, e.JS, objstore.Config{Bucket: "bench", Storage: storage})
	if err != nil {
		b.Fatal(err)
	}
	data, _ := io.ReadAll(newRand(9, benchSize))
	return e, s, data
}

func benchPut(b *testing.B, storage jsapi.StorageType) {
	e, s, data := benchStore(b, storage)
	b.ReportAllocs()
	b.SetBytes(benchSize)
	for b.Loop() {
		if _, err := s.Put(e.Ctx, objstore.Meta{Name: "obj"}, bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func benchGet(b *testing.B, storage jsapi.StorageType) {
	e, s, data := benchStore(b, storage)
	if _, err := s.PutBytes(e.Ctx, "obj", data); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(benchSize)
	for b.Loop() {
		r, err := s.Get(e.Ctx, "obj")
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, r); err != nil || n != benchSize {
			b.Fatalf("read %d: %v", n, err)
		}
		r.Close()
	}
}

// The server runs in a child process with file storage (or memory).
func BenchmarkPut64MiB(b *testing.B)       { benchPut(b, jsapi.StorageFile) }
func BenchmarkGet64MiB(b *testing.B)       { benchGet(b, jsapi.StorageFile) }
func BenchmarkPut64MiBMemory(b *testing.B) { benchPut(b, jsapi.StorageMemory) }
func BenchmarkGet64MiBMemory(b *testing.B) { benchGet(b, jsapi.StorageMemory) }
