package objstore_test

import (
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/objstore"
)

// A zero Opt or WatchOpt fails its call with an error matching
// conn.ErrInvalidOption before anything is sent.
func TestInvalidOptionsSendNothing(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "opts"})
	if _, err := s.PutString(e.Ctx, "o", "data"); err != nil {
		t.Fatal(err)
	}
	first := func(seq func(yield func(*objstore.Info, error) bool)) error {
		for _, err := range seq {
			return err
		}
		return nil
	}
	cases := []struct {
		name string
		call func() error
	}{
		{"GetInfo", func() error { _, err := s.GetInfo(e.Ctx, "o", objstore.Opt{}); return err }},
		{"Get", func() error { _, err := s.Get(e.Ctx, "o", objstore.Opt{}); return err }},
		{"GetBytes", func() error { _, err := s.GetBytes(e.Ctx, "o", objstore.ShowDeleted(), objstore.Opt{}); return err }},
		{"List", func() error { return first(s.List(e.Ctx, objstore.Opt{})) }},
		{"Watch", func() error { return first(s.Watch(e.Ctx, objstore.WatchOpt{})) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { testutil.Refused(t, e.Conn, conn.ErrInvalidOption, tc.call) })
	}
}
