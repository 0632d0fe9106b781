package jsapi_test

import (
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// New refuses a bad option with an error matching conn.ErrInvalidOption
// and accepts the edges of the valid ranges.
func TestNewOptionsChecked(t *testing.T) {
	s := natstest.NewServer(t)
	nc := connect(t, s.URL())
	bad := map[string]jsapi.Option{
		"zero":                   {},
		"timeout 0":              jsapi.Timeout(0),
		"retry -1":               jsapi.RetryOnNoResponders(-1, time.Millisecond),
		"retry over the most":    jsapi.RetryOnNoResponders(jsapi.MaxPublishRetries+1, time.Millisecond),
		"retry without a wait":   jsapi.RetryOnNoResponders(1, 0),
		"negative wait":          jsapi.RetryOnNoResponders(0, -time.Millisecond),
		"wait doubled overflows": jsapi.RetryOnNoResponders(jsapi.MaxPublishRetries, time.Hour),
		"bad domain":             jsapi.Domain("a.b"),
		"bad API prefix":         jsapi.APIPrefix("a..b"),
	}
	for name, o := range bad {
		if _, err := jsapi.New(nc, o); !errors.Is(err, conn.ErrInvalidOption) {
			t.Errorf("%s: %v, want ErrInvalidOption", name, err)
		}
	}
	for name, o := range map[string]jsapi.Option{
		"no retry":     jsapi.RetryOnNoResponders(0, 0),
		"the most":     jsapi.RetryOnNoResponders(jsapi.MaxPublishRetries, time.Millisecond),
		"the defaults": jsapi.RetryOnNoResponders(2, 250*time.Millisecond),
	} {
		if _, err := jsapi.New(nc, o); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
