package streamstore

import (
	"errors"

	"github.com/natsio/natsio/internal/deadline"
	"github.com/natsio/natsio/jsapi"
)

// Child returns an error value with msg that also matches parent
// (errors.Is).
func Child(msg string, parent error) error { return &childError{msg: msg, parent: parent} }

type childError struct {
	msg    string
	parent error
}

func (e *childError) Error() string        { return e.msg }
func (e *childError) Is(target error) bool { return target == e.parent }

// Wrap joins a store's error value with the error that caused it, so that
// both match with errors.Is and the message says what the server said.
func Wrap(kind, cause error) error { return &joined{kind: kind, cause: cause} }

type joined struct {
	kind  error
	cause error
}

func (e *joined) Error() string   { return e.kind.Error() + ": " + e.cause.Error() }
func (e *joined) Unwrap() []error { return []error{e.kind, e.cause} }

// Err is the error a call on a store returns for err: a missing stream is
// the kind's NotFound (joined with err), a passed deadline also matches
// conn.ErrTimeout. Nil stays nil.
func (k *Kind) Err(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, jsapi.ErrStreamNotFound) {
		return Wrap(k.NotFound, err)
	}
	return deadline.Err(err)
}

// PubErr is the error of a publish to the store: no stream answering is
// the kind's NotFound (joined with err).
func (k *Kind) PubErr(err error) error {
	if err != nil && errors.Is(err, jsapi.ErrNoStreamResponse) {
		return Wrap(k.NotFound, err)
	}
	return err
}
