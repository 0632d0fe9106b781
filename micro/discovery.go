package micro

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/natsio/natsio/conn"
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
				sub, err = s.nc.SubscribeInlineUnsafe(subject, s.answerInline(ping))
			case verbInfo:
				sub, err = s.nc.SubscribeInlineUnsafe(subject, s.answerInline(info))
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
