package natscontext_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/natsio/natsio/natscontext"
)

// A context name from untrusted input is only ever a name; a file path
// the user chose is read with LoadFile. Printing a context hides its
// secrets.
func ExampleLoadFile() {
	dir, _ := os.MkdirTemp("", "natscontext-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ops.json")
	_ = os.WriteFile(path, []byte(`{"url":"nats://127.0.0.1:4222","user":"ops","password":"s3cret"}`), 0o600)

	_, err := natscontext.Load(path) // a path is not a name
	fmt.Println(errors.Is(err, natscontext.ErrInvalidName))

	c, err := natscontext.LoadFile(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Name, c.User, len(c.Warnings()))
	printed := fmt.Sprintf("%+v", c)
	fmt.Println(strings.Contains(printed, "s3cret"), strings.Contains(printed, "Password:[REDACTED]"))
	// Output:
	// true
	// ops ops 0
	// false true
}
