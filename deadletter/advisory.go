package deadletter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The advisory subject prefixes; the server appends ".<stream>.<consumer>".
const (
	SubjectMaxDeliveries = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"
	SubjectTerminated    = "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED"
)

// The advisory types (the "type" member of their JSON).
const (
	TypeMaxDeliveries = "io.nats.jetstream.advisory.v1.max_deliver"
	TypeTerminated    = "io.nats.jetstream.advisory.v1.terminated"
)

// Reason is why a message became a dead letter.
type Reason string

const (
	// MaxDeliveries: the consumer delivered the message MaxDeliver times
	// and it was never acknowledged.
	MaxDeliveries Reason = "max_deliveries"
	// Terminated: a client terminated the message (Term, TermWithReason).
	Terminated Reason = "terminated"
)

// ErrNotAdvisory: the message is not a MAX_DELIVERIES or MSG_TERMINATED
// advisory, or its JSON is malformed.
var ErrNotAdvisory = errors.New("deadletter: not a max deliveries or terminated advisory")

// Advisory is a MAX_DELIVERIES or MSG_TERMINATED advisory: the server's
// notice that a consumer gave up on a message.
type Advisory struct {
	// Reason tells which advisory this is.
	Reason Reason `json:"-"`
	// Type is the JSON schema type (TypeMaxDeliveries or TypeTerminated).
	Type string    `json:"type"`
	ID   string    `json:"id"`
	Time time.Time `json:"timestamp"`
	// Stream and Consumer name where the message was consumed; StreamSeq
	// is its sequence in that stream.
	Stream    string `json:"stream"`
	Consumer  string `json:"consumer"`
	StreamSeq uint64 `json:"stream_seq"`
	// ConsumerSeq is the delivery's consumer sequence (terminated only).
	ConsumerSeq uint64 `json:"consumer_seq,omitempty"`
	// Deliveries is how many times the message was delivered.
	Deliveries uint64 `json:"deliveries"`
	// Description is the reason given to TermWithReason (terminated only).
	Description string `json:"reason,omitempty"`
	Domain      string `json:"domain,omitempty"`
}

// AdvisorySubjects returns the subjects of the two advisories for a
// consumer of stream; consumer may be "*" for every consumer of the stream.
func AdvisorySubjects(stream, consumer string) []string {
	return []string{SubjectMaxDeliveries + "." + stream + "." + consumer, SubjectTerminated + "." + stream + "." + consumer}
}

// ParseAdvisory decodes the advisory published on subject with the JSON
// body data. Anything but a MAX_DELIVERIES or MSG_TERMINATED advisory with
// a stream, a consumer and a stream sequence is ErrNotAdvisory.
func ParseAdvisory(subject string, data []byte) (*Advisory, error) {
	var a Advisory
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotAdvisory, err)
	}
	switch {
	case a.Type == TypeMaxDeliveries && (subject == "" || strings.HasPrefix(subject, SubjectMaxDeliveries+".")):
		a.Reason = MaxDeliveries
	case a.Type == TypeTerminated && (subject == "" || strings.HasPrefix(subject, SubjectTerminated+".")):
		a.Reason = Terminated
	default:
		return nil, fmt.Errorf("%w: type %q on %q", ErrNotAdvisory, a.Type, subject)
	}
	if a.Stream == "" || a.Consumer == "" || a.StreamSeq == 0 {
		return nil, fmt.Errorf("%w: no stream, consumer or sequence", ErrNotAdvisory)
	}
	return &a, nil
}
