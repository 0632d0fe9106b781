package scenarios

import (
	"context"
	"fmt"
)

// StreamProbe reads how far the stream of a publishing scenario has got,
// so that bench -pair can check each block on the server: a block of n
// publishes must advance the stream's last sequence by exactly n.
type StreamProbe struct {
	a      *admin
	stream string
	// every: the stream keeps every message (JetStream publishes), so
	// it must hold as many as its last sequence. A KV bucket keeps one
	// revision per key.
	every bool
}

// NewStreamProbe connects a probe for the scenario's stream. It returns
// nil for kinds that do not publish to a stream (the core kinds, which are
// checked on the server's in_msgs instead, and the read scenarios).
func (s Scenario) NewStreamProbe(ctx context.Context, url string) (*StreamProbe, error) {
	switch s.Kind {
	case JSPubSync, JSPubAsync, KVPut:
	default:
		return nil, nil
	}
	a, err := dialAdmin(ctx, url)
	if err != nil {
		return nil, err
	}
	return &StreamProbe{a: a, stream: s.streamName(), every: s.Kind != KVPut}, nil
}

// LastSeq returns the stream's last sequence. For a stream that keeps
// every message it fails when the stream holds another number of messages.
func (p *StreamProbe) LastSeq(ctx context.Context) (uint64, error) {
	st, err := p.a.state(ctx, p.stream)
	if err != nil {
		return 0, err
	}
	if p.every && st.Msgs != st.LastSeq {
		return 0, fmt.Errorf("stream %s holds %d messages, last sequence %d", p.stream, st.Msgs, st.LastSeq)
	}
	return st.LastSeq, nil
}

// Close closes the probe's connection.
func (p *StreamProbe) Close() error { return p.a.nc.Close() }
