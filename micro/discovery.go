package micro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/connx"
	"github.com/natsio/natsio/proto"
)

// ServiceIdentity holds the fields every discovery response carries
// besides its type.
type ServiceIdentity struct {
	Name     string            `json:"name"`
	ID       string            `json:"id"`
	Version  string            `json:"version"`
	Metadata map[string]string `json:"metadata"`
}

// PingResponse is a service's PING response (type
// io.nats.micro.v1.ping_response).
type PingResponse struct {
	Type string `json:"type"`
	ServiceIdentity
}

// Info is a service's INFO response (type io.nats.micro.v1.info_response).
type Info struct {
	Type string `json:"type"`
	ServiceIdentity
	Description string `json:"description"`
	// Endpoints holds every endpoint, in the order they were added.
	Endpoints []EndpointInfo `json:"endpoints"`
}

// EndpointInfo describes one endpoint in an INFO response: the subject and
// queue group it actually uses ("" for none), defaults included.
type EndpointInfo struct {
	Name       string            `json:"name"`
	Subject    string            `json:"subject"`
	QueueGroup string            `json:"queue_group"`
	Metadata   map[string]string `json:"metadata"`
}

// Discovery verbs.
const (
	verbPing  = "PING"
	verbInfo  = "INFO"
	verbStats = "STATS"
)

// controlSubject returns <prefix>.<verb>[.<name>[.<id>]].
func controlSubject(prefix, verb, name, id string) string {
	s := prefix + "." + verb
	if name != "" {
		s += "." + name
		if id != "" {
			s += "." + id
		}
	}
	return s
}

// Info returns the service's INFO response as it would be sent now.
func (s *Service) Info() Info {
	eps := s.endpointList()
	info := Info{
		Type:            InfoResponseType,
		ServiceIdentity: s.identity(),
		Description:     s.cfg.Description,
		Endpoints:       make([]EndpointInfo, len(eps)),
	}
	for i, e := range eps {
		info.Endpoints[i] = e.Info()
	}
	return info
}

// updateInfoLocked encodes the INFO response again (after an endpoint was
// added); the PING and INFO handlers send the encoded bytes as they are.
func (s *Service) updateInfoLocked() error {
	info := Info{
		Type:            InfoResponseType,
		ServiceIdentity: s.identityView(),
		Description:     s.cfg.Description,
		Endpoints:       make([]EndpointInfo, len(s.endpoints)),
	}
	for i, e := range s.endpoints {
		info.Endpoints[i] = EndpointInfo{Name: e.name, Subject: e.subject, QueueGroup: e.queue, Metadata: e.metadata}
	}
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	s.infoJSON.Store(&b)
	return nil
}

// subscribeDiscoveryLocked subscribes, without queue group, to the nine
// discovery subjects. PING and INFO are answered on the connection's
// reading goroutine with bytes encoded beforehand (no user code runs
// there); STATS, which calls StatsHandler, on a goroutine of its own.
func (s *Service) subscribeDiscoveryLocked() error {
	ping := func() []byte { return s.pingJSON }
	info := func() []byte { return *s.infoJSON.Load() }
	for _, target := range [][2]string{{"", ""}, {s.cfg.Name, ""}, {s.cfg.Name, s.id}} {
		for _, verb := range []string{verbPing, verbInfo, verbStats} {
			subject := controlSubject(s.prefix, verb, target[0], target[1])
			var sub *conn.Subscription
			var err error
			switch verb {
			case verbPing:
				sub, err = connx.SubscribeInline(s.nc, subject, s.answerInline(ping))
			case verbInfo:
				sub, err = connx.SubscribeInline(s.nc, subject, s.answerInline(info))
			default:
				sub, err = s.nc.SubscribeFunc(subject, s.answerStats)
			}
			if err != nil {
				return fmt.Errorf("micro: subscribing to %s: %w", subject, err)
			}
			s.discovery = append(s.discovery, sub)
		}
	}
	return nil
}

// answerInline returns a handler that replies with body(). It runs on the
// connection's reading goroutine, so a failure is handed to ErrHandler on
// a goroutine of its own.
func (s *Service) answerInline(body func() []byte) func(*conn.Msg) {
	return func(m *conn.Msg) {
		if m.Reply == "" {
			return
		}
		if err := m.Respond(body()); err != nil && s.cfg.ErrHandler != nil && !ending(err) {
			err = fmt.Errorf("micro: service %s: answering %s: %w", s.cfg.Name, m.Subject, err)
			go s.reportErr(err)
		}
	}
}

func (s *Service) answerStats(m *conn.Msg) {
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	if m.Reply == "" {
		return
	}
	b, err := json.Marshal(s.Stats())
	if err == nil {
		err = m.Respond(b)
	}
	if err != nil && !ending(err) {
		s.reportErr(fmt.Errorf("micro: service %s: answering %s: %w", s.cfg.Name, m.Subject, err))
	}
}

// ending reports an error that only says the connection is going away.
func ending(err error) bool {
	return errors.Is(err, conn.ErrClosed) || errors.Is(err, conn.ErrDraining)
}

// DiscoverOpt configures Ping, Infos and StatsOf.
type DiscoverOpt func(*discoverOpts) error

type discoverOpts struct {
	id     string
	stall  time.Duration
	prefix string
}

// DefaultDiscoverStall is how long Ping, Infos and StatsOf wait for one
// more reply after the last one.
const DefaultDiscoverStall = 200 * time.Millisecond

// DiscoverID asks one instance only: $SRV.<verb>.<name>.<id>. The call
// then ends at the first reply. It needs a name.
func DiscoverID(id string) DiscoverOpt {
	return func(o *discoverOpts) error {
		if !validName(id) {
			return configErr(ErrInvalidName, "service id", id)
		}
		o.id = id
		return nil
	}
}

// DiscoverPrefix sends the requests to <prefix>.PING… instead of
// $SRV.PING…: for services started with that Config.Prefix, or for the
// services of another account whose $SRV subjects this account imports
// under prefix (ADR-32 asks for the prefix to be overridable as $JS is,
// for tools that work across accounts). The import must allow several
// responses (response_type: stream) for a request to reach more than one
// service. prefix must be a subject without wildcards.
func DiscoverPrefix(prefix string) DiscoverOpt {
	return func(o *discoverOpts) error {
		if !validPrefix(prefix) {
			return configErr(ErrInvalidSubject, "prefix", prefix)
		}
		o.prefix = prefix
		return nil
	}
}

// validPrefix reports whether p can start a discovery subject: a subject
// without wildcards.
func validPrefix(p string) bool {
	return proto.ValidatePublishSubject(p) == nil
}

// DiscoverStall sets how long to wait for one more reply after the last
// (default DefaultDiscoverStall); d must be positive.
func DiscoverStall(d time.Duration) DiscoverOpt {
	return func(o *discoverOpts) error {
		if d <= 0 {
			return configErr(ErrInvalidConfig, "discover stall", d.String())
		}
		o.stall = d
		return nil
	}
}

// Ping sends a PING to every service (name ""), to the instances of
// service name, or with DiscoverID to one instance, and returns the
// replies. Replies are gathered with conn.RequestMany: until none has come
// for the stall time (DiscoverStall) after the last, within ctx's deadline
// or the connection's request timeout. When no service answers at all,
// Ping returns no reply and no error. A reply that is not a PING response
// ends the call with ErrBadResponse (with the replies before it);
// connection errors (conn.ErrTimeout, conn.ErrClosed…) end it likewise.
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
	o := discoverOpts{stall: DefaultDiscoverStall, prefix: APIPrefix}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if name != "" && !validName(name) {
		return nil, configErr(ErrInvalidName, "name", name)
	}
	if o.id != "" && name == "" {
		return nil, configErr(ErrInvalidConfig, "service id without a name", o.id)
	}
	many := []conn.RequestManyOpt{conn.ManyStall(o.stall)}
	if o.id != "" {
		many = append(many, conn.ManyMax(1))
	}
	var out []T
	for m, err := range nc.RequestMany(ctx, controlSubject(o.prefix, verb, name, o.id), nil, nil, many...) {
		if errors.Is(err, conn.ErrNoResponders) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		var v T
		if err := json.Unmarshal(m.Data, &v); err != nil {
			return out, fmt.Errorf("%w: %v", ErrBadResponse, err)
		}
		if got := typeOf(&v); got != want {
			return out, fmt.Errorf("%w: type %q, want %q", ErrBadResponse, got, want)
		}
		out = append(out, v)
	}
	return out, nil
}
