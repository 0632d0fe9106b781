package natsotel_test

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/conn"
	natsotel "github.com/natsio/natsio/otel"
)

// New rejects a bad option, and the zero Option, with an error matching
// conn.ErrInvalidOption, as every natsio package does.
func TestNewRejectsBadOptions(t *testing.T) {
	for name, opt := range map[string]natsotel.Option{
		"zero":                {},
		"nil tracer provider": natsotel.WithTracerProvider(nil),
		"nil meter provider":  natsotel.WithMeterProvider(nil),
		"nil propagator":      natsotel.WithPropagator(nil),
	} {
		if _, err := natsotel.New(opt); !errors.Is(err, conn.ErrInvalidOption) {
			t.Errorf("%s: %v, want an error matching conn.ErrInvalidOption", name, err)
		}
	}
}
