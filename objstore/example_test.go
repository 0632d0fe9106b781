package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/objstore"
)

// exampleJS starts an embedded JetStream server and returns a JetStream
// view of a connection to it, and a cleanup.
func exampleJS() (*jsapi.JS, func()) {
	s, err := natstest.Start()
	if err != nil {
		panic(err)
	}
	url, stop := s.URL(), s.Close
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, url)
	if err != nil {
		panic(err)
	}
	js, _ := jsapi.New(nc)
	return js, func() { nc.Close(); stop() }
}

// An artifacts store: builds upload versioned artifacts with metadata, a
// "latest" link points at the current one, and deployers download through
// the link with the digest verified.
func Example_artifactsStore() {
	js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	store, err := objstore.CreateStore(ctx, js, objstore.Config{Bucket: "artifacts"})
	if err != nil {
		fmt.Println(err)
		return
	}
	build := bytes.Repeat([]byte("binary "), 50_000) // 350 kB: three chunks
	info, err := store.Put(ctx, objstore.Meta{
		Name:        "app/v1.4.2.tar.gz",
		Description: "release build",
		Metadata:    map[string]string{"commit": "3f2a9c1"},
	}, bytes.NewReader(build))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("stored %s: %d bytes in %d chunks\n", info.Name, info.Size, info.Chunks)

	latest, _ := store.GetInfo(ctx, "app/v1.4.2.tar.gz")
	store.AddLink(ctx, "app/latest", latest)

	r, err := store.Get(ctx, "app/latest")
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := io.Copy(io.Discard, r) // fails with ErrDigestMismatch on corruption
	r.Close()
	fmt.Printf("downloaded %s via app/latest: %d bytes, err=%v\n", r.Info().Name, n, err)

	store.PutString(ctx, "app/notes.txt", "fixes the login bug")
	for obj, err := range store.List(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		kind := "object"
		if obj.IsLink() {
			kind = "link to " + obj.Opts.Link.Name
		}
		fmt.Printf("%s (%s)\n", obj.Name, kind)
	}

	store.Delete(ctx, "app/notes.txt")
	_, err = store.GetInfo(ctx, "app/notes.txt")
	fmt.Println("after delete:", errors.Is(err, objstore.ErrObjectNotFound))
	// Output:
	// stored app/v1.4.2.tar.gz: 350000 bytes in 3 chunks
	// downloaded app/v1.4.2.tar.gz via app/latest: 350000 bytes, err=<nil>
	// app/v1.4.2.tar.gz (object)
	// app/latest (link to app/v1.4.2.tar.gz)
	// app/notes.txt (object)
	// after delete: true
}

// Watching a store: the current objects, the end-of-initial marker, then
// changes.
func ExampleStore_Watch() {
	js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	store, _ := objstore.CreateStore(ctx, js, objstore.Config{Bucket: "models"})
	store.PutString(ctx, "model-a", "weights a")

	for info, err := range store.Watch(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if info == nil {
			fmt.Println("-- initial objects done --")
			store.Put(ctx, objstore.Meta{Name: "model-b"}, strings.NewReader("weights b"))
			continue
		}
		fmt.Println(info.Name, info.Size, info.Deleted)
		if info.Name == "model-b" {
			break
		}
	}
	// Output:
	// model-a 9 false
	// -- initial objects done --
	// model-b 9 false
}
