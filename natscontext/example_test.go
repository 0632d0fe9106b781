package natscontext_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natscontext"
	"github.com/natsio/natsio/natstest"
)

// Connect from a named context, as the nats CLI and natsio CLI do, and
// make a JetStream view with the context's settings.
func Example() {
	s, err := natstest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	// For the example, a configuration directory of its own.
	dir, _ := os.MkdirTemp("", "natscontext-example-")
	defer os.RemoveAll(dir)
	os.Setenv("XDG_CONFIG_HOME", dir)
	defer os.Unsetenv("XDG_CONFIG_HOME")

	// What `natsio context add local --server URL --select` writes.
	if err := natscontext.Save(&natscontext.Context{Name: "local", URL: s.URL(), Description: "a test server"}); err != nil {
		fmt.Println(err)
		return
	}
	if err := natscontext.Select("local"); err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := natscontext.Load("") // the selected context
	if err != nil {
		fmt.Println(err)
		return
	}
	nc, err := natscontext.Connect(ctx, c.Name)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, err := jsapi.New(nc, c.JSOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	names, _ := natscontext.Names()
	fmt.Println("contexts:", names, "selected:", c.Name, "prefix:", js.Prefix())
	// Output: contexts: [local] selected: local prefix: $JS.API.
}
