package clients

import (
	"context"
	"errors"
	"os"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/pubwin"
)

// IsTimeout reports whether err says only that something did not happen in
// time: ErrTimeout, a context deadline, an I/O deadline, or a client
// library's timeout error (natsio conn.ErrTimeout and pubwin.ErrAckTimeout,
// nats.go nats.ErrTimeout and jetstream.ErrAsyncPublishTimeout). Every other error of a run (a lost, extra or
// malformed message, a wrong sequence, a protocol error) is a failure.
func IsTimeout(err error) bool {
	return err != nil && (errors.Is(err, ErrTimeout) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, conn.ErrTimeout) ||
		errors.Is(err, pubwin.ErrAckTimeout) ||
		errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrAsyncPublishTimeout))
}
