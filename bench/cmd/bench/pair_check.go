package main

import (
	"context"
	"fmt"
	"time"

	"github.com/natsio/natsio/bench/internal/harness"
	"github.com/natsio/natsio/bench/internal/scenarios"
)

// blockCheck verifies on the server, in paired mode, that one block did
// exactly what its client reports: for the core kinds the server's in_msgs
// grew by the block times the messages per operation (a publish reached
// the server, a request and its reply did), for the publishing JetStream
// kinds the stream's last sequence grew by the block (every publish
// stored and acknowledged once). The other client is idle during a block,
// so whatever the server counted belongs to it. The read scenarios have
// nothing to count on the server; their fixture is checked at the end.
type blockCheck struct {
	srv   *harness.Server
	perOp int // in_msgs per operation; 0: not checked on in_msgs
	probe *scenarios.StreamProbe

	inMsgs  int64
	lastSeq uint64
}

func newBlockCheck(ctx context.Context, s scenarios.Scenario, srv *harness.Server) (*blockCheck, error) {
	b := &blockCheck{srv: srv, perOp: s.InMsgsPerOp()}
	var err error
	if b.probe, err = s.NewStreamProbe(ctx, srv.URL); err != nil {
		return nil, fmt.Errorf("stream probe: %w", err)
	}
	return b, nil
}

// String says what the check verifies.
func (b *blockCheck) String() string {
	switch {
	case b.perOp == 1:
		return "the server's in_msgs grew by exactly the block"
	case b.perOp > 1:
		return fmt.Sprintf("the server's in_msgs grew by exactly %d × the block", b.perOp)
	case b.probe != nil:
		return "the stream's last sequence grew by exactly the block"
	}
	return "by the client only; the fixture at the end"
}

// before reads the counters a block will be checked against.
func (b *blockCheck) before(ctx context.Context) error {
	if b.perOp > 0 {
		v, err := b.srv.Varz()
		if err != nil {
			return fmt.Errorf("varz: %w", err)
		}
		b.inMsgs = v.InMsgs
	}
	if b.probe != nil {
		var err error
		if b.lastSeq, err = b.probeLast(ctx); err != nil {
			return err
		}
	}
	return nil
}

// after checks a block of n operations against the counters read before it.
func (b *blockCheck) after(ctx context.Context, n int) error {
	if b.perOp > 0 {
		want := int64(n * b.perOp)
		got, err := inMsgsSince(b.srv, b.inMsgs, want)
		if err != nil {
			return fmt.Errorf("varz: %w", err)
		}
		if got != want {
			return fmt.Errorf("block of %d operations: the server received %d messages, want %d", n, got, want)
		}
	}
	if b.probe != nil {
		last, err := b.probeLast(ctx)
		if err != nil {
			return err
		}
		if got := last - b.lastSeq; got != uint64(n) {
			return fmt.Errorf("block of %d publishes: the stream's last sequence moved from %d to %d (%d stored)", n, b.lastSeq, last, got)
		}
	}
	return nil
}

func (b *blockCheck) probeLast(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	last, err := b.probe.LastSeq(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream probe: %w", err)
	}
	return last, nil
}

func (b *blockCheck) close() {
	if b.probe != nil {
		_ = b.probe.Close()
	}
}
