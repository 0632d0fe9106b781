package micro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// DiscoverOpt configures Ping, Infos and StatsOf.
type DiscoverOpt struct{ f func(*discoverOpts) error }

// apply applies o to c; the zero DiscoverOpt is invalid.
func (o DiscoverOpt) apply(c *discoverOpts) error {
	if o.f == nil {
		return fmt.Errorf("%w: zero DiscoverOpt", conn.ErrInvalidOption)
	}
	return o.f(c)
}

type discoverOpts struct {
	id         string
	stall      time.Duration
	prefix     string
	maxReplies int
	maxBytes   int
}

// DefaultDiscoverStall is how long Ping, Infos and StatsOf wait for one
// more reply after the last one.
const DefaultDiscoverStall = 200 * time.Millisecond

// Default bounds of one Ping, Infos or StatsOf call (DiscoverLimits).
const (
	// DefaultDiscoverMaxReplies is how many replies one call keeps.
	DefaultDiscoverMaxReplies = 10_000
	// DefaultDiscoverMaxBytes is how many bytes the replies of one call
	// may hold, counted as the larger of a reply's size on the wire and
	// an estimate of what it decodes to.
	DefaultDiscoverMaxBytes = 16 << 20
	// MaxDiscoverReply is the largest reply accepted, in bytes on the
	// wire (or the byte bound of DiscoverLimits when smaller): a JSON
	// reply can decode to about 30 times its size (an array of empty
	// objects), so one reply is refused before it is decoded.
	MaxDiscoverReply = 256 << 10
)

// maxUnsubCount is the largest count nats-server reads in an UNSUB.
const maxUnsubCount = 999_999_999

// ErrDiscoverLimit: a discovery call reached its bound on replies or bytes
// (DiscoverLimits) before its stall or timeout. The replies kept so far
// are returned with it.
var ErrDiscoverLimit = errors.New("micro: discovery reply limit reached")

// DiscoverID asks one instance only: $SRV.<verb>.<name>.<id>. The call
// then ends at the first reply. It needs a name.
func DiscoverID(id string) DiscoverOpt {
	return DiscoverOpt{func(o *discoverOpts) error {
		if !validName(id) {
			return configErr(ErrInvalidName, "service id", id)
		}
		o.id = id
		return nil
	}}
}

// DiscoverPrefix sends the requests to <prefix>.PING… instead of
// $SRV.PING…: for services started with that Config.Prefix, or for the
// services of another account whose $SRV subjects this account imports
// under prefix (ADR-32 asks for the prefix to be overridable as $JS is,
// for tools that work across accounts). The import must allow several
// responses (response_type: stream) for a request to reach more than one
// service. prefix must be a subject without wildcards.
func DiscoverPrefix(prefix string) DiscoverOpt {
	return DiscoverOpt{func(o *discoverOpts) error {
		if !validPrefix(prefix) {
			return configErr(ErrInvalidSubject, "prefix", prefix)
		}
		o.prefix = prefix
		return nil
	}}
}

// validPrefix reports whether p can start a discovery subject: a subject
// without wildcards.
func validPrefix(p string) bool {
	return proto.ValidatePublishSubject(p) == nil
}

// DiscoverStall sets how long to wait for one more reply after the last
// (default DefaultDiscoverStall); d must be positive.
func DiscoverStall(d time.Duration) DiscoverOpt {
	return DiscoverOpt{func(o *discoverOpts) error {
		if d <= 0 {
			return configErr(ErrInvalidConfig, "discover stall", d.String())
		}
		o.stall = d
		return nil
	}}
}

// DiscoverLimits bounds what one call keeps: at most replies replies
// (default DefaultDiscoverMaxReplies) holding at most bytes bytes
// (default DefaultDiscoverMaxBytes; see there how they are counted). Both
// must be positive. A call that would go beyond either returns the
// replies it kept with ErrDiscoverLimit.
func DiscoverLimits(replies, bytes int) DiscoverOpt {
	return DiscoverOpt{func(o *discoverOpts) error {
		if replies <= 0 || bytes <= 0 {
			return configErr(ErrInvalidConfig, "discover limits", fmt.Sprintf("%d replies, %d bytes", replies, bytes))
		}
		o.maxReplies, o.maxBytes = replies, bytes
		return nil
	}}
}

// Ping sends a PING to every service (name ""), to the instances of
// service name, or with DiscoverID to one instance, and returns the
// replies. Replies are gathered with conn.RequestMany until none has come
// for the stall time (DiscoverStall) after the last, or until ctx's
// deadline (the connection's request timeout when ctx has none): the call
// returns then, even while replies keep arriving, with the replies kept
// and no error (conn.ErrTimeout when something listens and nothing came).
// When no service listens at all, Ping returns no reply and no error.
//
// What one call keeps is bounded (DiscoverLimits): beyond it the call ends
// with the replies kept and ErrDiscoverLimit. A reply that is larger than
// MaxDiscoverReply, or is not a PING response, ends the call with
// ErrBadResponse (with the replies before it); connection errors
// (conn.ErrTimeout, conn.ErrClosed…) and a cancelled ctx end it likewise.
func Ping(ctx context.Context, nc *conn.Conn, name string, opts ...DiscoverOpt) ([]PingResponse, error) {
	return discover(ctx, nc, verbPing, PingResponseType, name, opts, func(r *PingResponse) string { return r.Type })
}

// Infos is Ping for INFO responses.
func Infos(ctx context.Context, nc *conn.Conn, name string, opts ...DiscoverOpt) ([]Info, error) {
	return discover(ctx, nc, verbInfo, InfoResponseType, name, opts, func(r *Info) string { return r.Type })
}

// StatsOf is Ping for STATS responses.
func StatsOf(ctx context.Context, nc *conn.Conn, name string, opts ...DiscoverOpt) ([]Stats, error) {
	return discover(ctx, nc, verbStats, StatsResponseType, name, opts, func(r *Stats) string { return r.Type })
}

func discover[T any](ctx context.Context, nc *conn.Conn, verb, want, name string, opts []DiscoverOpt, typeOf func(*T) string) ([]T, error) {
	if nc == nil {
		return nil, configErr(ErrInvalidConfig, "connection", "<nil>")
	}
	if ctx == nil {
		return nil, configErr(ErrInvalidConfig, "context", "<nil>")
	}
	o := discoverOpts{stall: DefaultDiscoverStall, prefix: APIPrefix,
		maxReplies: DefaultDiscoverMaxReplies, maxBytes: DefaultDiscoverMaxBytes}
	for _, opt := range opts {
		if err := opt.apply(&o); err != nil {
			return nil, err
		}
	}
	if name != "" && !validName(name) {
		return nil, configErr(ErrInvalidName, "name", name)
	}
	if o.id != "" && name == "" {
		return nil, configErr(ErrInvalidConfig, "service id without a name", o.id)
	}
	// The gathering ends at this deadline whatever arrives: it is checked
	// before each reply is looked at, not only while waiting for one.
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(nc.RequestTimeout())
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	// One reply beyond the bound tells that the bound was reached; the
	// server stops routing replies after it. nats-server reads at most 9
	// digits in an UNSUB's count: a larger bound is kept here only.
	limit := o.maxReplies + 1
	if o.id != "" {
		limit = 1
	}
	many := []conn.RequestManyOpt{conn.ManyStall(o.stall)}
	if limit <= maxUnsubCount {
		many = append(many, conn.ManyMax(limit))
	}
	maxReply := min(MaxDiscoverReply, o.maxBytes)
	var out []T
	held := 0
	for m, err := range nc.RequestMany(ctx, controlSubject(o.prefix, verb, name, o.id), nil, nil, many...) {
		if errors.Is(err, conn.ErrNoResponders) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			if ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return out, nil // the gathering is complete
			}
			return out, context.Cause(ctx)
		}
		if len(out) == o.maxReplies {
			return out, fmt.Errorf("%w: %d replies", ErrDiscoverLimit, o.maxReplies)
		}
		if len(m.Data) > maxReply {
			return out, fmt.Errorf("%w: a reply of %d bytes, over the %d-byte limit", ErrBadResponse, len(m.Data), maxReply)
		}
		var v T
		if err := json.Unmarshal(m.Data, &v); err != nil {
			return out, fmt.Errorf("%w: %v", ErrBadResponse, err)
		}
		if got := typeOf(&v); got != want {
			return out, fmt.Errorf("%w: type %q, want %q", ErrBadResponse, got, want)
		}
		held += max(len(m.Data), decodedSize(&v))
		if held > o.maxBytes {
			return out, fmt.Errorf("%w: %d bytes", ErrDiscoverLimit, o.maxBytes)
		}
		out = append(out, v)
	}
	return out, nil
}
