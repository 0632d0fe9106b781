// Package deadline gives the upper layers (kv, objstore, extra) conn's
// rule for deadline errors: a call ended by a passed deadline returns an
// error matching both context.DeadlineExceeded and conn.ErrTimeout.
package deadline

import (
	"context"
	"errors"

	"github.com/natsio/natsio/conn"
)

// Err returns err, made to match conn.ErrTimeout as well when it matches
// context.DeadlineExceeded and does not already; its text and what it
// wraps are unchanged.
func Err(err error) error {
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, conn.ErrTimeout) {
		return err
	}
	return &timeoutError{err}
}

type timeoutError struct{ err error }

func (e *timeoutError) Error() string   { return e.err.Error() }
func (e *timeoutError) Is(t error) bool { return t == conn.ErrTimeout }
func (e *timeoutError) Unwrap() error   { return e.err }
