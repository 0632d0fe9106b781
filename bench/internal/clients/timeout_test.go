package clients

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/pubwin"
)

func TestIsTimeoutOnlyForTimeouts(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{fmt.Errorf("%w: 3 acks outstanding", ErrTimeout), true},
		{fmt.Errorf("flush: %w", context.DeadlineExceeded), true},
		{conn.ErrTimeout, true},
		{errors.Join(errors.New("complete"), pubwin.ErrAckTimeout), true},
		{nats.ErrTimeout, true},
		{jetstream.ErrAsyncPublishTimeout, true},
		// A failure reported next to a timeout is a failure.
		{fmt.Errorf("2 publishes failed, 0 acks lost: %v", pubwin.ErrAckTimeout), false},
		{errors.New("received 9 of 10 messages, none for 10s"), false},
		{errors.New("server received 349 messages, the client sent 350"), false},
		{pubwin.ErrTooManyStalled, false},
	} {
		if got := IsTimeout(c.err); got != c.want {
			t.Errorf("IsTimeout(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
