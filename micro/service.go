package micro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nuid"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// Wire constants of ADR-32.
const (
	// APIPrefix starts every discovery subject: $SRV.PING, $SRV.INFO.<name>…
	APIPrefix = "$SRV"
	// DefaultQueueGroup is the queue group endpoints join unless configured
	// otherwise.
	DefaultQueueGroup = "q"
	// DefaultEndpointName names Config.Endpoint when its Name is empty.
	DefaultEndpointName = "default"

	PingResponseType  = "io.nats.micro.v1.ping_response"
	InfoResponseType  = "io.nats.micro.v1.info_response"
	StatsResponseType = "io.nats.micro.v1.stats_response"

	// ErrorHeader carries a service error's description.
	ErrorHeader = "Nats-Service-Error"
	// ErrorCodeHeader carries a service error's code, an integer as text.
	ErrorCodeHeader = "Nats-Service-Error-Code"
)

// Config configures a service. Name and Version are required; every other
// field may be left zero.
type Config struct {
	// Name is the kind of service, shared by all its instances: A-Z, a-z,
	// 0-9, '-' and '_' only.
	Name string
	// Version is a semantic version (https://semver.org), e.g. "1.2.0" or
	// "2.0.0-rc.1+build.5".
	Version string
	// Description is free text reported by INFO.
	Description string
	// Metadata is reported by every discovery response. It is copied:
	// changing the map afterwards changes nothing.
	Metadata map[string]string
	// QueueGroup is the queue group of the service's endpoints, unless a
	// group or endpoint overrides it. Zero value: DefaultQueueGroup ("q").
	QueueGroup string
	// NoQueueGroup makes endpoints plain subscriptions (every instance
	// receives every request) unless a group or endpoint sets a queue
	// group. It cannot be combined with QueueGroup.
	NoQueueGroup bool
	// Endpoint, when set, is added with the service (the "root" endpoint);
	// AddService fails if it cannot be.
	Endpoint *EndpointConfig
	// StatsHandler, when set, returns the "data" of an endpoint's stats; it
	// is called once per endpoint for every STATS request and Stats call,
	// on the goroutine answering it, and its result is encoded as JSON.
	StatsHandler func(*Endpoint) any
	// DoneHandler, when set, is called once when the service has stopped:
	// at the end of Stop, or when the connection closes.
	DoneHandler func(*Service)
	// Prefix replaces APIPrefix ("$SRV") as the start of the discovery
	// subjects the service answers on: <Prefix>.PING, <Prefix>.INFO.<name>…
	// It must be a subject without wildcards; its case is kept. Discovery
	// clients reach such a service with DiscoverPrefix. (A tool reaching
	// services of another account through an import needs only
	// DiscoverPrefix: the services keep $SRV.)
	Prefix string
	// ErrHandler, when set, receives errors no caller sees: discovery
	// replies that could not be sent, requests dropped because an
	// endpoint's queue was full (matching conn.ErrSlowConsumer), a
	// StatsHandler result that does not encode, and the error that closed
	// the connection. It may be called from several goroutines at once and
	// should return quickly.
	ErrHandler func(*Service, error)
}

// EndpointConfig configures the root endpoint (Config.Endpoint).
type EndpointConfig struct {
	// Name of the endpoint; zero value DefaultEndpointName ("default").
	Name string
	// Subject the endpoint listens on (wildcards allowed). Required.
	Subject string
	// Handler handles the requests. Required.
	Handler Handler
	// Metadata is reported by INFO; it is copied.
	Metadata map[string]string
	// QueueGroup overrides Config.QueueGroup for this endpoint.
	QueueGroup string
	// NoQueueGroup makes this endpoint a plain subscription.
	NoQueueGroup bool
}

// Service is a running service: its discovery subscriptions and endpoints
// on one connection. Several services may share a connection. A service
// runs until Stop or until its connection closes. Its methods are safe for
// concurrent use.
type Service struct {
	nc      *conn.Conn
	cfg     Config
	prefix  string // of the discovery subjects
	id      string
	started time.Time
	queue   string // the service's queue group, "" for none

	pingJSON []byte                 // immutable
	infoJSON atomic.Pointer[[]byte] // replaced when an endpoint is added

	mu        sync.Mutex
	endpoints []*Endpoint
	discovery []*conn.Subscription
	stopping  bool

	// inflight counts handler calls running (endpoints and STATS): Stop
	// finding none cannot have been called from one.
	inflight atomic.Int32

	done       chan struct{}
	finishOnce sync.Once
}

// AddService validates cfg, subscribes to the discovery subjects
// ($SRV.PING|INFO|STATS, each alone, with .<name> and with .<name>.<id>;
// Config.Prefix replaces $SRV)
// and adds cfg.Endpoint if set. It fails with a *ConfigError
// (ErrInvalidName, ErrInvalidVersion, ErrInvalidQueueGroup,
// ErrInvalidSubject, ErrInvalidConfig) before anything is sent, or with
// the connection's error (conn.ErrClosed, conn.ErrDraining…), in which
// case whatever was subscribed is unsubscribed again.
//
// The service answers PING and INFO on the goroutine that reads the
// connection, from responses encoded beforehand, and STATS on a goroutine
// of its own. Each endpoint handles its requests on its subscription's
// goroutine, one at a time. One more goroutine watches for the connection
// closing; all of them end after Stop or Close.
func AddService(nc *conn.Conn, cfg Config) (*Service, error) {
	if nc == nil {
		return nil, configErr(ErrInvalidConfig, "connection", "<nil>")
	}
	if !validName(cfg.Name) {
		return nil, configErr(ErrInvalidName, "name", cfg.Name)
	}
	if !validSemver(cfg.Version) {
		return nil, configErr(ErrInvalidVersion, "version", cfg.Version)
	}
	prefix := APIPrefix
	if cfg.Prefix != "" {
		if !validPrefix(cfg.Prefix) {
			return nil, configErr(ErrInvalidSubject, "prefix", cfg.Prefix)
		}
		prefix = cfg.Prefix
	}
	queue := DefaultQueueGroup
	switch {
	case cfg.NoQueueGroup && cfg.QueueGroup != "":
		return nil, configErr(ErrInvalidConfig, "queue group (with NoQueueGroup)", cfg.QueueGroup)
	case cfg.NoQueueGroup:
		queue = ""
	case cfg.QueueGroup != "":
		queue = cfg.QueueGroup
		if proto.ValidateQueue(queue) != nil {
			return nil, configErr(ErrInvalidQueueGroup, "queue group", queue)
		}
	}
	var root *endpointSpec
	if ec := cfg.Endpoint; ec != nil {
		name := ec.Name
		if name == "" {
			name = DefaultEndpointName
		}
		if ec.Subject == "" {
			return nil, configErr(ErrInvalidSubject, "endpoint subject", "")
		}
		opts := []EndpointOpt{EndpointSubject(ec.Subject), EndpointMetadata(ec.Metadata)}
		if ec.NoQueueGroup {
			opts = append(opts, EndpointNoQueueGroup())
		}
		if ec.QueueGroup != "" {
			opts = append(opts, EndpointQueueGroup(ec.QueueGroup))
		}
		sp, err := newEndpointSpec("", queue, name, ec.Handler, opts)
		if err != nil {
			return nil, err
		}
		root = &sp
	}

	s := &Service{
		nc:      nc,
		cfg:     cfg,
		prefix:  prefix,
		id:      nuid.Next(),
		started: time.Now().UTC(),
		queue:   queue,
		done:    make(chan struct{}),
	}
	s.cfg.Metadata = cloneMeta(cfg.Metadata)
	s.cfg.Endpoint = nil
	ping, err := json.Marshal(PingResponse{Type: PingResponseType, ServiceIdentity: s.identityView()})
	if err != nil {
		return nil, err
	}
	s.pingJSON = ping

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.updateInfoLocked(); err != nil {
		return nil, err
	}
	if err := s.subscribeDiscoveryLocked(); err != nil {
		s.unsubscribeLocked()
		return nil, err
	}
	if root != nil {
		if err := s.addEndpointLocked(*root); err != nil {
			s.unsubscribeLocked()
			return nil, err
		}
	}
	go s.watch()
	return s, nil
}

// ID returns the instance's unique id (a NUID), as reported by discovery
// and used in $SRV.<verb>.<name>.<id>.
func (s *Service) ID() string { return s.id }

// Name returns Config.Name.
func (s *Service) Name() string { return s.cfg.Name }

// Conn returns the service's connection.
func (s *Service) Conn() *conn.Conn { return s.nc }

// Stopped reports whether the service has stopped (Stop has returned or is
// draining, or the connection has closed).
func (s *Service) Stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// Done returns a channel closed when the service has stopped and every
// handler call has returned, just before DoneHandler is called. Receiving
// from it after Stop is a graceful shutdown of this service alone (the
// connection may serve others); never do so from one of its handlers.
func (s *Service) Done() <-chan struct{} { return s.done }

// Stop drains every subscription of the service, endpoints first, then
// discovery: the server is told to stop sending, and requests already on
// their way are still delivered to their handlers, and Stop waits until
// the handlers have worked through them. Then it calls DoneHandler, once,
// on the calling goroutine. Stop may be called from a handler, so when a
// handler call is still running once the subscriptions have drained, Stop
// returns without waiting for it: Done is then closed, and DoneHandler
// called on another goroutine, when the last handler call returns. A
// graceful shutdown that must not cut a request short receives from Done
// after Stop (never from a handler).
//
// When ctx ends first, the remaining subscriptions are unsubscribed at
// once, the service still stops, and Stop returns ctx's error. Without a
// deadline on ctx, Stop waits for the handlers at most the connection's
// drain timeout (Conn.DrainTimeout, 30 s by default) and then returns an
// error matching conn.ErrTimeout (Done follows when they return). Stopping a
// service whose connection has closed is not an error. Calls after the
// first wait until the service has stopped (or ctx ends) and return nil.
// Stop may be called from a handler, DoneHandler or ErrHandler (a second
// call from a handler waits for ctx, as the handler it runs in has not
// returned).
func (s *Service) Stop(ctx context.Context) error {
	if ctx == nil {
		return conn.ErrNilContext
	}
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		select {
		case <-s.done:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	s.stopping = true
	subs := make([]*conn.Subscription, 0, len(s.endpoints)+len(s.discovery))
	for _, e := range s.endpoints {
		subs = append(subs, e.sub)
	}
	subs = append(subs, s.discovery...)
	s.mu.Unlock()

	var first error
	for _, sub := range subs {
		err := sub.Drain(ctx)
		if err != nil && first == nil && !errors.Is(err, conn.ErrClosed) && !errors.Is(err, conn.ErrBadSubscription) {
			first = err
		}
	}
	if s.inflight.Load() == 0 {
		// Not called from a handler: wait for the handler goroutines to
		// work through what was queued before the drain.
		if err := s.waitHandlers(ctx); err != nil {
			s.finishAfterHandlers()
			if first == nil {
				first = err
			}
			return first
		}
		s.finish()
		return first
	}
	s.finishAfterHandlers()
	return first
}

// handlerDones returns the channels closed when each handler goroutine of
// the service (endpoints, STATS) has returned for the last time.
func (s *Service) handlerDones() []<-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	waits := make([]<-chan struct{}, 0, len(s.endpoints)+len(s.discovery))
	for _, e := range s.endpoints {
		waits = append(waits, e.sub.HandlerDone())
	}
	for _, sub := range s.discovery {
		waits = append(waits, sub.HandlerDone())
	}
	return waits
}

// waitHandlers waits until every handler goroutine has returned, or ctx
// ends (its cause). Without a deadline on ctx it waits at most the
// connection's drain timeout, then fails with conn.ErrTimeout: a handler
// that never returns must not hold Stop for ever.
func (s *Service) waitHandlers(ctx context.Context) error {
	bound := ctx
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		d := s.nc.DrainTimeout()
		bound, cancel = context.WithTimeoutCause(ctx, d,
			fmt.Errorf("micro: handlers still running after %v: %w", d, conn.ErrTimeout))
		defer cancel()
	}
	for _, c := range s.handlerDones() {
		select {
		case <-c:
		case <-bound.Done():
			return context.Cause(bound)
		}
	}
	return nil
}

// finishAfterHandlers calls finish once every handler of the service has
// returned for the last time: at once when none is running, otherwise on a
// goroutine that waits for the last one.
func (s *Service) finishAfterHandlers() {
	waits := s.handlerDones()
	for i, c := range waits {
		select {
		case <-c:
			continue
		default:
		}
		go func() {
			for _, c := range waits[i:] {
				<-c
			}
			s.finish()
		}()
		return
	}
	s.finish()
}

// finish marks the service stopped, once, and calls DoneHandler.
func (s *Service) finish() {
	s.finishOnce.Do(func() {
		s.mu.Lock()
		s.stopping = true
		s.mu.Unlock()
		close(s.done)
		if s.cfg.DoneHandler != nil {
			s.cfg.DoneHandler(s)
		}
	})
}

// watch stops the service when its connection closes (its subscriptions
// are gone with it) and ends when the service stops.
func (s *Service) watch() {
	select {
	case <-s.done:
	case <-s.nc.Closed():
		if err := s.nc.Err(); err != nil {
			s.reportErr(fmt.Errorf("micro: service %s: connection closed: %w", s.cfg.Name, err))
		}
		s.finishAfterHandlers()
	}
}

// reportErr hands err to ErrHandler, if any.
func (s *Service) reportErr(err error) {
	if s.cfg.ErrHandler != nil {
		s.cfg.ErrHandler(s, err)
	}
}

// unsubscribeLocked removes every subscription at once (AddService's
// failure path).
func (s *Service) unsubscribeLocked() {
	for _, e := range s.endpoints {
		e.sub.Unsubscribe()
	}
	for _, sub := range s.discovery {
		sub.Unsubscribe()
	}
	s.endpoints, s.discovery = nil, nil
	s.stopping = true
}

// endpointList returns the endpoints in the order they were added.
func (s *Service) endpointList() []*Endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Endpoint(nil), s.endpoints...)
}

// identityView is the service's identity sharing its metadata map (for
// encoding; never handed to users).
func (s *Service) identityView() ServiceIdentity {
	return ServiceIdentity{Name: s.cfg.Name, ID: s.id, Version: s.cfg.Version, Metadata: s.cfg.Metadata}
}

// identity is identityView with a copy of the metadata.
func (s *Service) identity() ServiceIdentity {
	id := s.identityView()
	id.Metadata = cloneMeta(id.Metadata)
	return id
}

// cloneMeta copies m; the copy is never nil, so that it encodes as {}.
func cloneMeta(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	maps.Copy(c, m)
	return c
}
