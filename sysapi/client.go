package sysapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
)

// DefaultTimeout bounds a call whose context has no deadline.
const DefaultTimeout = 5 * time.Second

// Client reads the monitoring API over one connection. It holds no
// subscription and runs no goroutine: make one with New as often as
// convenient. It is safe for concurrent use.
type Client struct {
	nc      *conn.Conn
	timeout time.Duration
}

// Option configures a Client.
type Option struct{ f func(*Client) error }

// apply applies o to c; the zero Option is invalid.
func (o Option) apply(c *Client) error {
	if o.f == nil {
		return fmt.Errorf("%w: zero Option", conn.ErrInvalidOption)
	}
	return o.f(c)
}

// Timeout bounds every call whose context has no deadline (default
// DefaultTimeout). d must be positive.
func Timeout(d time.Duration) Option {
	return Option{func(c *Client) error {
		if d <= 0 {
			return fmt.Errorf("%w: timeout %v", conn.ErrInvalidOption, d)
		}
		c.timeout = d
		return nil
	}}
}

// New returns a Client over nc. It does not contact the server. It fails
// with conn.ErrInvalidOption for a bad option or a nil nc.
func New(nc *conn.Conn, opts ...Option) (*Client, error) {
	if nc == nil {
		return nil, fmt.Errorf("%w: nil connection", conn.ErrInvalidOption)
	}
	c := &Client{nc: nc, timeout: DefaultTimeout}
	for _, o := range opts {
		if err := o.apply(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Subject returns the subject of a request of kind to the server with id,
// or to all servers when id is "".
func Subject(kind Kind, id string) string {
	if id == "" {
		return "$SYS.REQ.SERVER.PING." + string(kind)
	}
	return "$SYS.REQ.SERVER." + id + "." + string(kind)
}

// pingSubject is the subject of the PING request ("server ping"): the
// STATSZ of every server.
const pingSubject = "$SYS.REQ.SERVER.PING"

// bounded returns ctx with the Client's timeout when it has no deadline.
func (c *Client) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout)
}

// body encodes request options; nil for none.
func body(o any) ([]byte, error) {
	if o == nil {
		return nil, nil
	}
	b, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", conn.ErrInvalidOption, err)
	}
	if string(b) == "{}" {
		return nil, nil
	}
	return b, nil
}

// one sends a request to one server and decodes its reply.
func one[T any](ctx context.Context, c *Client, kind Kind, id string, opts any) (*Reply[T], error) {
	if id == "" {
		return nil, fmt.Errorf("%w: empty server ID", conn.ErrInvalidOption)
	}
	data, err := body(opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	subj := Subject(kind, id)
	start := time.Now()
	m, err := c.nc.Request(ctx, subj, data)
	if err != nil {
		return nil, c.noAnswer(ctx, err, true)
	}
	r, err := decode[T](kind, subj, m.Data)
	if err != nil {
		return nil, err
	}
	if r.Error != nil {
		return nil, r.Error
	}
	r.Elapsed = time.Since(start)
	return r, nil
}

// noAnswer turns a request's failure into the package's errors: a request
// nobody answered is ErrNoSystemAccount, or ErrUnknownServer when direct
// and the system account does answer a ping.
func (c *Client) noAnswer(ctx context.Context, err error, direct bool) error {
	switch {
	case errors.Is(err, conn.ErrNoResponders):
		if direct && c.systemAnswers(ctx) {
			return fmt.Errorf("%w (%w)", ErrUnknownServer, err)
		}
		return fmt.Errorf("%w (%w)", ErrNoSystemAccount, err)
	case errors.Is(err, conn.ErrTimeout) && !errors.Is(err, context.Canceled):
		return fmt.Errorf("%w (%w)", ErrNoSystemAccount, err)
	}
	return err
}

// systemAnswers reports whether any server answers IDZ, the cheapest
// kind, to all servers within what is left of ctx.
func (c *Client) systemAnswers(ctx context.Context) bool {
	for m, err := range c.nc.RequestMany(ctx, Subject(KindIdz, ""), nil, nil, conn.ManyMax(1)) {
		return err == nil && m != nil
	}
	return false
}

// envelope is the shape of every reply: the server, then data (statsz for
// STATSZ and PING) or an error.
type envelope struct {
	Server ServerInfo      `json:"server"`
	Data   json.RawMessage `json:"data"`
	Statsz json.RawMessage `json:"statsz"`
	Error  *APIError       `json:"error"`
}

// decode parses a reply of kind. raw belongs to the caller (conn hands
// over replies) and is kept as Reply.Raw.
func decode[T any](kind Kind, subj string, raw []byte) (*Reply[T], error) {
	r := &Reply[T]{Raw: json.RawMessage(raw)}
	if kind == KindIdz {
		// IDZ's reply is the server's identity alone.
		var id struct {
			Name string `json:"name"`
			Host string `json:"host"`
			ID   string `json:"id"`
		}
		if err := json.Unmarshal(raw, &id); err != nil {
			return nil, badReply(kind, subj, err)
		}
		r.Server = ServerInfo{Name: id.Name, Host: id.Host, ID: id.ID}
		if err := json.Unmarshal(raw, &r.Data); err != nil {
			return nil, badReply(kind, subj, err)
		}
		return r, nil
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, badReply(kind, subj, err)
	}
	r.Server = env.Server
	if env.Error != nil {
		env.Error.Server = env.Server.Name
		r.Error = env.Error
		return r, nil
	}
	data := env.Data
	if kind == KindStatsz {
		data = env.Statsz
	}
	if len(data) == 0 {
		return nil, badReply(kind, subj, errors.New("no data"))
	}
	if err := json.Unmarshal(data, &r.Data); err != nil {
		return nil, badReply(kind, subj, err)
	}
	return r, nil
}

func badReply(kind Kind, subj string, err error) error {
	return fmt.Errorf("%w: %s reply on %s: %v", ErrBadReply, kind, subj, err)
}
