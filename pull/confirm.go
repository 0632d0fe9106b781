package pull

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/natsio/natsio/jsapi"
)

// Confirming statuses.
//
// Any client that may subscribe to the consumer's
// $JS.API.CONSUMER.MSG.NEXT subject learns the reply subjects of its pulls
// and can publish a status there: no status on a pull inbox proves that
// the server sent it. A status that claims a condition ending a read (the
// consumer deleted or push based, the pull rejected, no responders) is
// therefore checked with consumer info before a read ends for it, and a
// read ends for the condition consumer info shows, not for the status.
// Statuses that only end one pull (expired, leadership change, too many
// waiting pulls, message too large, pin mismatch, unknown codes) end
// nothing more: Messages pulls again after a pause, and Fetch returns them
// as the end of its pull, withdrawn at the server first (withdraw).

// confirm asks consumer info whether a read of c with settings s, whose
// pulls ask for up to batch messages waiting up to expires, can go on. It
// returns the error that ends the read — serr itself when the condition
// it claims holds, else ErrConsumerDeleted, jsapi.ErrStreamNotFound,
// ErrPushConsumer or ErrBadPull (the consumer's configuration refuses
// such pulls) — or nil when the consumer exists and accepts the pulls.
// answered is false when the question got no answer (nil end then too).
// The API timeout bounds the question even under a far deadline.
func (c *Consumer) confirm(ctx context.Context, serr error, s *settings, batch int, expires time.Duration) (end error, answered bool) {
	ctx, cancel := context.WithTimeout(ctx, c.js.Timeout())
	defer cancel()
	info, err := c.Info(ctx)
	switch {
	case errors.Is(err, jsapi.ErrConsumerNotFound):
		return matching(serr, ErrConsumerDeleted), true
	case errors.Is(err, jsapi.ErrStreamNotFound):
		return jsapi.ErrStreamNotFound, true
	case err != nil:
		return nil, false
	}
	cfg := &info.Config
	switch {
	case cfg.DeliverSubject != "":
		return matching(serr, ErrPushConsumer), true
	case cfg.MaxRequestBatch > 0 && batch > cfg.MaxRequestBatch:
		return badPull(serr, "batch %d above the consumer's MaxRequestBatch %d", batch, cfg.MaxRequestBatch), true
	case cfg.MaxRequestExpires > 0 && expires > cfg.MaxRequestExpires:
		return badPull(serr, "expires %v above the consumer's MaxRequestExpires %v", expires, cfg.MaxRequestExpires), true
	case cfg.MaxRequestMaxBytes > 0 && s.maxBytes > cfg.MaxRequestMaxBytes:
		return badPull(serr, "max bytes %d above the consumer's MaxRequestMaxBytes %d", s.maxBytes, cfg.MaxRequestMaxBytes), true
	}
	cp := *s
	if err := checkPriority(cfg, &cp); err != nil {
		return badPull(serr, "%v", err), true
	}
	return nil, true
}

// matching returns serr when it claims kind, else kind.
func matching(serr, kind error) error {
	if errors.Is(serr, kind) {
		return serr
	}
	return kind
}

// badPull returns serr when it is a rejected pull, else ErrBadPull with
// the reason consumer info gave.
func badPull(serr error, format string, a ...any) error {
	if errors.Is(serr, ErrBadPull) {
		return serr
	}
	return fmt.Errorf("%w: "+format, append([]any{ErrBadPull}, a...)...)
}

// unconfirmed is what a read reports for a status that consumer info did
// not confirm. It does not match the status's kind.
func unconfirmed(serr error) error {
	return fmt.Errorf("%w: %v", ErrUnconfirmedStatus, serr)
}
