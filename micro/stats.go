package micro

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Stats is a service's STATS response (type io.nats.micro.v1.stats_response).
type Stats struct {
	Type string `json:"type"`
	ServiceIdentity
	// Endpoints holds one entry per endpoint, in the order they were added.
	Endpoints []EndpointStats `json:"endpoints"`
	// Started is when the service was added, in UTC. Reset does not change
	// it.
	Started time.Time `json:"started"`
}

// EndpointStats are the counters of one endpoint.
type EndpointStats struct {
	Name       string `json:"name"`
	Subject    string `json:"subject"`
	QueueGroup string `json:"queue_group"`
	// NumRequests counts the requests the endpoint's handler was called
	// for. A request is counted before the handler runs.
	NumRequests uint64 `json:"num_requests"`
	// NumErrors counts Request.Error calls, responses sent with the
	// service-error headers, and responses that failed to be sent.
	NumErrors uint64 `json:"num_errors"`
	// LastError is the latest error: "<code>:<description>" for a service
	// error, the error text for a failed response; "" when none.
	LastError string `json:"last_error"`
	// ProcessingTime is the total time spent in the handler (nanoseconds
	// on the wire). It is added when the handler returns.
	ProcessingTime time.Duration `json:"processing_time"`
	// AverageProcessingTime is ProcessingTime / NumRequests, truncated;
	// 0 when NumRequests is 0.
	AverageProcessingTime time.Duration `json:"average_processing_time"`
	// Data is what Config.StatsHandler returned for the endpoint, as JSON;
	// absent without a StatsHandler.
	Data json.RawMessage `json:"data,omitempty"`
}

// counters are an endpoint's statistics. Requests of one endpoint are
// handled one at a time, but errors may be reported from any goroutine
// (a request may be answered later, elsewhere), and Stats and Reset run
// concurrently: a mutex keeps the fields consistent with one another.
type counters struct {
	mu         sync.Mutex
	requests   uint64
	errors     uint64
	processing time.Duration
	lastError  string
}

func (c *counters) request() {
	c.mu.Lock()
	c.requests++
	c.mu.Unlock()
}

func (c *counters) handled(d time.Duration) {
	c.mu.Lock()
	c.processing += d
	c.mu.Unlock()
}

func (c *counters) error(text string) {
	c.mu.Lock()
	c.errors++
	c.lastError = text
	c.mu.Unlock()
}

func (c *counters) reset() {
	c.mu.Lock()
	c.requests, c.errors, c.processing, c.lastError = 0, 0, 0, ""
	c.mu.Unlock()
}

// fill copies the counters into s.
func (c *counters) fill(s *EndpointStats) {
	c.mu.Lock()
	s.NumRequests = c.requests
	s.NumErrors = c.errors
	s.LastError = c.lastError
	s.ProcessingTime = c.processing
	if c.requests > 0 {
		s.AverageProcessingTime = c.processing / time.Duration(c.requests)
	}
	c.mu.Unlock()
}

// Stats returns the endpoint's counters (without Data: the StatsHandler
// is called by Service.Stats and by STATS requests only).
func (e *Endpoint) Stats() EndpointStats {
	s := EndpointStats{Name: e.name, Subject: e.subject, QueueGroup: e.queue}
	e.counters.fill(&s)
	return s
}

// Stats returns the service's STATS response as it would be sent now,
// calling Config.StatsHandler once per endpoint when it is set.
func (s *Service) Stats() Stats {
	st := Stats{Type: StatsResponseType, ServiceIdentity: s.identity(), Started: s.started}
	eps := s.endpointList()
	st.Endpoints = make([]EndpointStats, len(eps))
	for i, e := range eps {
		st.Endpoints[i] = e.Stats()
		if s.cfg.StatsHandler != nil {
			data, err := json.Marshal(s.cfg.StatsHandler(e))
			if err != nil {
				s.reportErr(fmt.Errorf("micro: endpoint %q: stats handler data: %w", e.name, err))
				continue
			}
			st.Endpoints[i].Data = data
		}
	}
	return st
}

// Reset sets every endpoint's counters to zero (the start time stays).
func (s *Service) Reset() {
	for _, e := range s.endpointList() {
		e.counters.reset()
	}
}
