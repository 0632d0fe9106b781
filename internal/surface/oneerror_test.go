package surface

import (
	"testing"

	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/pull"
)

// TestOneErrNoMessages: "no messages" is one value across the packages
// that read stored messages, so errors.Is(err, pull.ErrNoMessages) holds
// for an ordered read's idle timeout and a batch get that matched nothing
// alike. (The status error of a pull and of a batch get is one type too,
// *jsapi.StatusError: pull's and extra's tests match it with errors.As.)
func TestOneErrNoMessages(t *testing.T) {
	for name, err := range map[string]error{
		"pull.ErrNoMessages":    pull.ErrNoMessages,
		"ordered.ErrNoMessages": ordered.ErrNoMessages,
		"extra.ErrNoMessages":   extra.ErrNoMessages,
	} {
		if err != jsapi.ErrNoMessages {
			t.Errorf("%s is not jsapi.ErrNoMessages", name)
		}
	}
}
