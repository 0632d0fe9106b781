// Package pause waits for a duration or for a context, whichever ends
// first: the backoff between retries of the JetStream layers.
package pause

import (
	"context"
	"time"
)

// For waits d, or until ctx ends, whose cause it then returns. The timer
// is stopped either way.
func For(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
