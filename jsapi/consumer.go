package jsapi

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// Consumer create actions ("action" of the create request).
const (
	actionCreateOrUpdate = ""
	actionCreate         = "create"
	actionUpdate         = "update"
)

// createConsumerRequest is the body of CONSUMER.CREATE.
type createConsumerRequest struct {
	Stream string         `json:"stream_name"`
	Config ConsumerConfig `json:"config"`
	Action string         `json:"action"`
}

// consumerName is the name a configuration gives its consumer: Name, else
// Durable, else "" (the server picks one).
func consumerName(cfg *ConsumerConfig) (string, error) {
	if cfg.Name != "" && cfg.Durable != "" && cfg.Name != cfg.Durable {
		return "", fmt.Errorf("%w: consumer name %q and durable name %q differ", conn.ErrInvalidOption, cfg.Name, cfg.Durable)
	}
	name := cfg.Name
	if name == "" {
		name = cfg.Durable
	}
	if name != "" {
		if err := ValidateName(name); err != nil {
			return "", err
		}
	}
	return name, nil
}

// upsertConsumer sends a create request with action. The subject is
// CONSUMER.CREATE.<stream>.<name>, followed by the filter subject when the
// configuration has exactly one, literal, filter (so that permissions can
// be scoped to it; a wildcard filter cannot be part of a published
// subject), or CONSUMER.CREATE.<stream> for a server-named consumer.
func (js *JS) upsertConsumer(ctx context.Context, stream string, cfg ConsumerConfig, action string) (*ConsumerInfo, error) {
	if err := ValidateName(stream); err != nil {
		return nil, err
	}
	name, err := consumerName(&cfg)
	if err != nil {
		return nil, err
	}
	subject := "CONSUMER.CREATE." + stream
	if name == "" {
		if action == actionUpdate {
			return nil, fmt.Errorf("%w: updating a consumer needs its name", conn.ErrInvalidOption)
		}
	} else {
		subject += "." + name
		if f := cfg.FilterSubject; f != "" && len(cfg.FilterSubjects) == 0 && proto.ValidatePublishSubject(f) == nil {
			subject += "." + f
		}
	}
	if cfg.AckPolicy == "" {
		// The zero value means explicit acknowledgement: the server's own
		// default, none, would make Ack a silent no-op.
		cfg.AckPolicy = AckExplicit
	}
	var info ConsumerInfo
	if err := js.requestFeature(ctx, cfg.feature(), subject, createConsumerRequest{Stream: stream, Config: cfg, Action: action}, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// CreateConsumer creates a consumer on stream. Creating one that exists
// with the same configuration succeeds and changes nothing; with a
// different configuration it fails with ErrConsumerExists. A consumer
// without Name and Durable gets a name from the server (see
// ConsumerInfo.Name). Invalid names fail with ErrInvalidName before any
// I/O; a missing stream fails with ErrStreamNotFound; a configuration the
// server refuses with its error (an *APIError).
func (js *JS) CreateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (*ConsumerInfo, error) {
	return js.upsertConsumer(ctx, stream, cfg, actionCreate)
}

// UpdateConsumer changes the configuration of an existing consumer. It
// fails with ErrConsumerDoesNotExist when there is none, with
// conn.ErrInvalidOption when cfg names no consumer, and with the server's error
// for a change it refuses (for example the deliver policy).
func (js *JS) UpdateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (*ConsumerInfo, error) {
	return js.upsertConsumer(ctx, stream, cfg, actionUpdate)
}

// CreateOrUpdateConsumer creates the consumer, or updates it when it
// exists. It fails like CreateConsumer otherwise.
func (js *JS) CreateOrUpdateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (*ConsumerInfo, error) {
	return js.upsertConsumer(ctx, stream, cfg, actionCreateOrUpdate)
}

// consumerSubject returns op.<stream>.<consumer> after checking both
// names.
func consumerSubject(op, stream, consumer string) (string, error) {
	if err := ValidateName(stream); err != nil {
		return "", err
	}
	if err := ValidateName(consumer); err != nil {
		return "", err
	}
	return op + "." + stream + "." + consumer, nil
}

// Consumer fetches a consumer's information. It fails with
// ErrConsumerNotFound when there is no such consumer, ErrStreamNotFound
// when there is no such stream, and ErrInvalidName before any I/O.
func (js *JS) Consumer(ctx context.Context, stream, consumer string) (*ConsumerInfo, error) {
	subject, err := consumerSubject("CONSUMER.INFO", stream, consumer)
	if err != nil {
		return nil, err
	}
	var info ConsumerInfo
	if err := js.request(ctx, subject, nil, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// DeleteConsumer deletes a consumer. It fails with ErrConsumerNotFound
// when there is no such consumer, ErrStreamNotFound when there is no such
// stream, and ErrInvalidName before any I/O.
func (js *JS) DeleteConsumer(ctx context.Context, stream, consumer string) error {
	subject, err := consumerSubject("CONSUMER.DELETE", stream, consumer)
	if err != nil {
		return err
	}
	return js.request(ctx, subject, nil, nil)
}

// pagedRequest is the body of the NAMES and LIST requests.
type pagedRequest struct {
	Offset int `json:"offset"`
}

type consumerNamesResponse struct {
	apiPaged
	Consumers []string `json:"consumers"`
}

type consumerListResponse struct {
	apiPaged
	Consumers []*ConsumerInfo `json:"consumers"`
	// Missing lists consumers that are offline or did not answer in time;
	// they take places in the listing's order.
	Missing []string `json:"missing,omitempty"`
}

// ConsumerNames yields the names of stream's consumers, in name order,
// requesting further pages as the loop advances. A failed request (for
// example ErrStreamNotFound, or ErrInvalidName) is yielded as a final
// ("", err). The iterator is meant to be ranged over once: ranging again
// lists again, with the same ctx.
func (js *JS) ConsumerNames(ctx context.Context, stream string) iter.Seq2[string, error] {
	return paged(func(offset int) ([]string, int, apiPaged, error) {
		if err := ValidateName(stream); err != nil {
			return nil, 0, apiPaged{}, err
		}
		var resp consumerNamesResponse
		err := js.request(ctx, "CONSUMER.NAMES."+stream, pagedRequest{Offset: offset}, &resp)
		return resp.Consumers, len(resp.Consumers), resp.apiPaged, err
	})
}

// Consumers yields the information of stream's consumers, like
// ConsumerNames. Consumers the server reports as offline, or whose
// information did not arrive in time (in a cluster), are skipped.
func (js *JS) Consumers(ctx context.Context, stream string) iter.Seq2[*ConsumerInfo, error] {
	return paged(func(offset int) ([]*ConsumerInfo, int, apiPaged, error) {
		if err := ValidateName(stream); err != nil {
			return nil, 0, apiPaged{}, err
		}
		var resp consumerListResponse
		err := js.request(ctx, "CONSUMER.LIST."+stream, pagedRequest{Offset: offset}, &resp)
		return resp.Consumers, len(resp.Consumers) + len(resp.Missing), resp.apiPaged, err
	})
}

// pauseRequest is the body of CONSUMER.PAUSE.
type pauseRequest struct {
	PauseUntil time.Time `json:"pause_until"`
}

// PauseConsumer stops deliveries of a consumer until the time until
// (server 2.11+) and returns the resulting state; a zero or past until
// resumes it. It fails with ErrConsumerNotFound or ErrStreamNotFound for a
// missing consumer or stream, and with ErrInvalidName before any I/O.
func (js *JS) PauseConsumer(ctx context.Context, stream, consumer string, until time.Time) (*ConsumerPauseState, error) {
	subject, err := consumerSubject("CONSUMER.PAUSE", stream, consumer)
	if err != nil {
		return nil, err
	}
	var body any
	if !until.IsZero() {
		body = pauseRequest{PauseUntil: until.UTC()}
	}
	var st ConsumerPauseState
	if err := js.requestFeature(ctx, FeatureConsumerPause, subject, body, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// ResumeConsumer resumes a paused consumer; see PauseConsumer.
func (js *JS) ResumeConsumer(ctx context.Context, stream, consumer string) (*ConsumerPauseState, error) {
	return js.PauseConsumer(ctx, stream, consumer, time.Time{})
}

// resetRequest is the body of CONSUMER.RESET.
type resetRequest struct {
	Seq uint64 `json:"seq"`
}

type resetResponse struct {
	ConsumerInfo
	ResetSeq uint64 `json:"reset_seq"`
}

// ResetConsumer moves a consumer back (or forward) so that it delivers
// next the stream sequence seq, or, for seq 0, the first message after its
// ack floor (server 2.14+). Pending acknowledgements are forgotten. It
// returns the consumer's information and the sequence it was reset to.
//
// A consumer whose deliver policy is not all, by_start_sequence or
// by_start_time can only be reset to its ack floor, and a seq below the
// configured start is refused: both fail with an error matching
// ErrInvalidReset. The reset subject is served by the consumer itself and
// a request nobody serves is not answered, so ResetConsumer first fetches
// the consumer's information: a missing consumer or stream fails at once
// with ErrConsumerNotFound or ErrStreamNotFound. A server older than 2.14,
// which would not answer, fails it with a *FeatureError before anything
// is sent.
func (js *JS) ResetConsumer(ctx context.Context, stream, consumer string, seq uint64) (*ConsumerInfo, uint64, error) {
	subject, err := consumerSubject("CONSUMER.RESET", stream, consumer)
	if err != nil {
		return nil, 0, err
	}
	if err := js.check(ctx, FeatureConsumerReset); err != nil {
		return nil, 0, err
	}
	if _, err := js.Consumer(ctx, stream, consumer); err != nil {
		return nil, 0, err
	}
	var body any
	if seq > 0 {
		body = resetRequest{Seq: seq}
	}
	var resp resetResponse
	if err := js.requestFeature(ctx, FeatureConsumerReset, subject, body, &resp); err != nil {
		return nil, 0, err
	}
	return &resp.ConsumerInfo, resp.ResetSeq, nil
}

// unpinRequest is the body of CONSUMER.UNPIN.
type unpinRequest struct {
	Group string `json:"group"`
}

// UnpinConsumer releases the pinned client of a priority group of a
// pinned_client consumer, so that the next pull may take the pin (server
// 2.11+). An unknown group or a consumer without it fails with an error
// matching ErrPriorityGroupConfig; a missing consumer or stream with
// ErrConsumerNotFound or ErrStreamNotFound; ErrInvalidName and an empty
// group (conn.ErrInvalidOption) before any I/O.
func (js *JS) UnpinConsumer(ctx context.Context, stream, consumer, group string) error {
	subject, err := consumerSubject("CONSUMER.UNPIN", stream, consumer)
	if err != nil {
		return err
	}
	if group == "" {
		return fmt.Errorf("%w: empty priority group", conn.ErrInvalidOption)
	}
	return js.requestFeature(ctx, FeaturePriorityGroups, subject, unpinRequest{Group: group}, nil)
}
