package micro_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/micro"
)

// An error code made from untrusted input with CR, LF or other control
// bytes still sends a reply: control bytes become spaces as in a
// description, a code that is then an integer is sent as it is, and one
// that is not is sent as 500. Before, Error sent nothing and the
// requester timed out.
func TestHostileErrorCodeSanitised(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	svc := addService(t, nc, micro.Config{Name: "codes", Version: "1.0.0"})
	codes := make(chan string, 1)
	sent := make(chan error, 1)
	if err := svc.AddEndpoint("fail", micro.HandlerFunc(func(r micro.Request) {
		sent <- r.Error(<-codes, "failed", nil)
	})); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		code, want string
		invalid    bool
	}{
		{"503\r\n", "503", false},
		{"\n404", "404", false},
		{"500\r\nInjected: yes", "500", true},
		{"4\x1b[2J2", "500", true},
	} {
		codes <- c.code
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		m, err := nc.Request(ctx, "fail", nil)
		cancel()
		serr := <-sent
		if err != nil {
			t.Fatalf("code %q: no reply: %v (Error: %v)", c.code, err, serr)
		}
		se, ok := micro.ResponseError(m).(*micro.ServiceError)
		if !ok || se.Code != c.want || se.Description != "failed" {
			t.Fatalf("code %q: reply error %v, want %s", c.code, micro.ResponseError(m), c.want)
		}
		if _, injected := m.Header.Lookup("Injected"); injected {
			t.Fatalf("code %q injected a header", c.code)
		}
		if c.invalid != errors.Is(serr, micro.ErrInvalidServiceError) {
			t.Fatalf("code %q: Error returned %v", c.code, serr)
		}
	}
}
