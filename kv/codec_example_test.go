package kv_test

import (
	"context"
	"fmt"
	"time"

	"github.com/natsio/natsio/kv"
)

// Keep file paths with spaces as keys: the path codec turns '/' into
// tokens and base64 makes each token a valid one.
func ExampleWithCodecs() {
	js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := kv.CreateBucket(ctx, js, kv.Config{Bucket: "files"})
	if err != nil {
		fmt.Println(err)
		return
	}
	keys, _ := kv.ChainKeyCodecs(kv.PathCodec(), kv.Base64Codec())
	files := kv.WithCodecs(b, keys, nil)
	if _, err := files.PutString(ctx, "/home/my docs/todo", "write the report"); err != nil {
		fmt.Println(err)
		return
	}
	e, err := files.Get(ctx, "/home/my docs/todo")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e.Key, "=", string(e.Value))
	stored, _ := b.Keys(ctx)
	fmt.Println("stored as", stored[0])
	// Output:
	// /home/my docs/todo = write the report
	// stored as X3Jvb3Rf.aG9tZQ.bXkgZG9jcw.dG9kbw
}
