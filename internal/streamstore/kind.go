package streamstore

import (
	"context"
	"errors"
	"iter"
	"strings"

	"github.com/natsio/natsio/jsapi"
)

// Kind is a kind of store kept in a stream: KV_<bucket> or OBJ_<store>.
type Kind struct {
	// Prefix is the stream name's prefix before the store's name.
	Prefix string
	// List is the subject filter that finds the kind's streams.
	List string
	// InvalidName, NotFound and Exists are the store's own error values:
	// a name ValidName refuses, no such stream, and a create that found
	// the stream with another configuration.
	InvalidName, NotFound, Exists error
}

// ValidName reports whether name is a valid store name: not empty, only
// a-z, A-Z, 0-9, '_' and '-'.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// CheckName returns k.InvalidName when ValidName refuses name.
func (k *Kind) CheckName(name string) error {
	if !ValidName(name) {
		return k.InvalidName
	}
	return nil
}

// Create creates the stream sc describes; a stream of that name with
// another configuration is k.Exists.
func (k *Kind) Create(ctx context.Context, js *jsapi.JS, sc jsapi.StreamConfig) (*jsapi.Stream, error) {
	st, err := js.CreateStream(ctx, sc)
	if err != nil {
		if errors.Is(err, jsapi.ErrStreamNameInUse) {
			return nil, Wrap(k.Exists, err)
		}
		return nil, k.Err(err)
	}
	return st, nil
}

// Update updates the stream sc describes; a missing one is k.NotFound.
func (k *Kind) Update(ctx context.Context, js *jsapi.JS, sc jsapi.StreamConfig) (*jsapi.Stream, error) {
	st, err := js.UpdateStream(ctx, sc)
	if err != nil {
		return nil, k.Err(err)
	}
	return st, nil
}

// CreateOrUpdate makes the stream sc describes exist with sc.
func (k *Kind) CreateOrUpdate(ctx context.Context, js *jsapi.JS, sc jsapi.StreamConfig) (*jsapi.Stream, error) {
	st, err := js.CreateOrUpdateStream(ctx, sc)
	if err != nil {
		return nil, k.Err(err)
	}
	return st, nil
}

// Bind returns the stream of the store name; a missing one is
// k.NotFound.
func (k *Kind) Bind(ctx context.Context, js *jsapi.JS, name string) (*jsapi.Stream, error) {
	if err := k.CheckName(name); err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, k.Prefix+name)
	if err != nil {
		return nil, k.Err(err)
	}
	return st, nil
}

// Delete deletes the stream of the store name; a missing one is
// k.NotFound.
func (k *Kind) Delete(ctx context.Context, js *jsapi.JS, name string) error {
	if err := k.CheckName(name); err != nil {
		return err
	}
	return k.Err(js.DeleteStream(ctx, k.Prefix+name))
}

// Names yields the names of the account's stores of this kind. A failure
// is yielded as a final ("", err).
func (k *Kind) Names(ctx context.Context, js *jsapi.JS) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for name, err := range js.StreamNames(ctx, k.List) {
			if err != nil {
				yield("", err)
				return
			}
			if b, ok := strings.CutPrefix(name, k.Prefix); ok {
				if !yield(b, nil) {
					return
				}
			}
		}
	}
}

// Statuses yields status(name, info) for each of the account's stores of
// kind k. A failure is yielded as a final (zero, err).
func Statuses[T any](ctx context.Context, js *jsapi.JS, k *Kind, status func(name string, info *jsapi.StreamInfo) T) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for info, err := range js.Streams(ctx, k.List) {
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			if b, ok := strings.CutPrefix(info.Config.Name, k.Prefix); ok {
				if !yield(status(b, info), nil) {
					return
				}
			}
		}
	}
}

// Op makes a kind's stream: Create, Update or CreateOrUpdate.
type Op func(context.Context, *jsapi.JS, jsapi.StreamConfig) (*jsapi.Stream, error)

// Open makes the stream sc describes with op and returns handle's handle
// on it; err, the failure to map the store's configuration to sc, is
// returned at once.
func Open[H any](ctx context.Context, js *jsapi.JS, op Op, sc jsapi.StreamConfig, err error, handle func(*jsapi.Stream) H) (H, error) {
	var zero H
	if err != nil {
		return zero, err
	}
	st, err := op(ctx, js, sc)
	if err != nil {
		return zero, err
	}
	return handle(st), nil
}
