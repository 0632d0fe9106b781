package sysapi

import (
	"context"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
)

// Bounds of a Ping call's gathering; see the package documentation.
const (
	DefaultStall      = 500 * time.Millisecond
	DefaultMaxReplies = 1024
	DefaultMaxBytes   = 64 << 20
)

// PingOpt configures how one Ping call gathers replies.
type PingOpt struct{ f func(*gather) error }

// apply applies o to c; the zero PingOpt is invalid.
func (o PingOpt) apply(c *gather) error {
	if o.f == nil {
		return fmt.Errorf("%w: zero PingOpt", conn.ErrInvalidOption)
	}
	return o.f(c)
}

type gather struct {
	expect   int
	stall    time.Duration
	max      int
	maxBytes int
}

// Expect ends the gathering once n servers have answered, and waits for
// them until the total timeout instead of ending at a stall. Fewer replies
// by then is ErrIncomplete, returned with the replies. n must be at least 1.
func Expect(n int) PingOpt {
	return PingOpt{func(g *gather) error {
		if n < 1 {
			return fmt.Errorf("%w: expect %d", conn.ErrInvalidOption, n)
		}
		g.expect = n
		return nil
	}}
}

// Stall ends the gathering when d passes without a new reply (default
// DefaultStall). It has no effect with Expect. d must be positive.
func Stall(d time.Duration) PingOpt {
	return PingOpt{func(g *gather) error {
		if d <= 0 {
			return fmt.Errorf("%w: stall %v", conn.ErrInvalidOption, d)
		}
		g.stall = d
		return nil
	}}
}

// MaxReplies ends the gathering, without error, after n replies (default
// DefaultMaxReplies). n must be at least 1.
func MaxReplies(n int) PingOpt {
	return PingOpt{func(g *gather) error {
		if n < 1 {
			return fmt.Errorf("%w: max replies %d", conn.ErrInvalidOption, n)
		}
		g.max = n
		return nil
	}}
}

// MaxBytes bounds the bytes of the replies kept (default
// DefaultMaxBytes): the reply that would pass it is dropped and the call
// returns the others with ErrReplyLimit. n must be positive.
func MaxBytes(n int) PingOpt {
	return PingOpt{func(g *gather) error {
		if n < 1 {
			return fmt.Errorf("%w: max bytes %d", conn.ErrInvalidOption, n)
		}
		g.maxBytes = n
		return nil
	}}
}

// all sends a request to every server on subj and gathers the replies.
func all[T any](ctx context.Context, c *Client, kind Kind, subj string, opts any, popts []PingOpt) ([]*Reply[T], error) {
	g := gather{stall: DefaultStall, max: DefaultMaxReplies, maxBytes: DefaultMaxBytes}
	for _, o := range popts {
		if err := o.apply(&g); err != nil {
			return nil, err
		}
	}
	data, err := body(opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	max := g.max
	mopts := []conn.RequestManyOpt{}
	if g.expect > 0 {
		max = min(max, g.expect)
	} else {
		mopts = append(mopts, conn.ManyStall(g.stall))
	}
	mopts = append(mopts, conn.ManyMax(max))

	var out []*Reply[T]
	size := 0
	start := time.Now()
	for m, err := range c.nc.RequestMany(ctx, subj, nil, data, mopts...) {
		if err != nil {
			if len(out) == 0 {
				return nil, c.noAnswer(ctx, err, false)
			}
			return out, err
		}
		if size+len(m.Data) > g.maxBytes {
			return out, fmt.Errorf("%w: %d replies kept, next %d bytes over %d", ErrReplyLimit, len(out), len(m.Data), g.maxBytes)
		}
		size += len(m.Data)
		r, err := decode[T](kind, subj, m.Data)
		if err != nil {
			return out, err
		}
		r.Elapsed = time.Since(start)
		out = append(out, r)
	}
	if g.expect > 0 && len(out) < g.expect {
		if len(out) == 0 {
			return nil, c.noAnswer(ctx, conn.ErrTimeout, false)
		}
		return out, fmt.Errorf("%w: %d of %d", ErrIncomplete, len(out), g.expect)
	}
	return out, nil
}
