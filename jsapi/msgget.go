package jsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/directget"
	"github.com/natsio/natsio/proto"
)

// StoredMsg is a message read from a stream: by Stream.GetMsg,
// GetLastMsgForSubject and GetNextMsgForSubject, and by the batch reads of
// package extra (GetBatch, GetLastMsgsFor). It and the memory its fields
// view (the reply it was read from) belong to the caller: nothing in
// natsio reuses or changes them.
type StoredMsg struct {
	Subject  string
	Sequence uint64
	// Header is the message's header as it was stored, read in place
	// (see proto.Header); zero when it had none. The fields a Direct Get
	// reply adds (Nats-Stream, Nats-Subject, Nats-Sequence,
	// Nats-Time-Stamp, and for batch reads Nats-Num-Pending and
	// Nats-Last-Sequence) are removed. Stored fields of the same names
	// stay, but for a batch read's message whose stored header ends with
	// such fields: those cannot be told from the server's and are removed
	// too.
	Header proto.Header
	Data   []byte
	// Time is when the stream stored the message.
	Time time.Time
	// NumPending is, for a message of a batch read (package extra), how
	// many messages matching the request remained after this one when the
	// server answered; 0 from the reads of Stream.
	NumPending uint64
	// LastSequence is, for a message of a batch read (package extra), the
	// sequence of the message yielded before it (0 for the first); 0 from
	// the reads of Stream.
	LastSequence uint64
}

// msgGetRequest is the body of STREAM.MSG.GET and DIRECT.GET.
type msgGetRequest struct {
	Seq     uint64 `json:"seq,omitempty"`
	LastFor string `json:"last_by_subj,omitempty"`
	NextFor string `json:"next_by_subj,omitempty"`
}

// msgGetResponse is the reply of STREAM.MSG.GET.
type msgGetResponse struct {
	Message *struct {
		Subject  string    `json:"subject"`
		Sequence uint64    `json:"seq"`
		Header   []byte    `json:"hdrs,omitempty"`
		Data     []byte    `json:"data,omitempty"`
		Time     time.Time `json:"time"`
	} `json:"message"`
}

// GetMsg returns the message with sequence seq. It fails with
// ErrMsgNotFound when the stream has no such message (never stored,
// deleted or expired), and with conn.ErrInvalidOption for seq 0 before any I/O.
//
// Streams with AllowDirect (as of the handle's cached information, see
// Stream.Info) are read with Direct Get, from any replica or mirror that
// serves it; others with STREAM.MSG.GET through the stream leader. A
// Direct Get nobody serves (the stream was deleted, or no longer allows
// Direct Get) is answered at once with no responders; the read then falls
// back to STREAM.MSG.GET, which returns the message, or fails with
// ErrStreamNotFound for a missing stream (and with ErrNotEnabled only
// when JetStream itself does not answer). Direct Get status replies
// other than 404 are errors carrying the status (408, the server's "bad
// request", matches ErrBadRequest).
func (s *Stream) GetMsg(ctx context.Context, seq uint64) (*StoredMsg, error) {
	if seq == 0 {
		return nil, fmt.Errorf("%w: sequence 0", conn.ErrInvalidOption)
	}
	return s.getMsg(ctx, msgGetRequest{Seq: seq})
}

// GetLastMsgForSubject returns the newest message whose subject matches
// subject (which may be a wildcard). It fails with ErrMsgNotFound when
// there is none; see GetMsg.
func (s *Stream) GetLastMsgForSubject(ctx context.Context, subject string) (*StoredMsg, error) {
	if proto.ValidateSubscribeSubject(subject) != nil {
		return nil, fmt.Errorf("%w: subject %q", conn.ErrInvalidOption, subject)
	}
	return s.getMsg(ctx, msgGetRequest{LastFor: subject})
}

// GetNextMsgForSubject returns the first message at or after sequence
// fromSeq whose subject matches subject (which may be a wildcard). It fails
// with ErrMsgNotFound when there is none; see GetMsg.
func (s *Stream) GetNextMsgForSubject(ctx context.Context, subject string, fromSeq uint64) (*StoredMsg, error) {
	if proto.ValidateSubscribeSubject(subject) != nil {
		return nil, fmt.Errorf("%w: subject %q", conn.ErrInvalidOption, subject)
	}
	return s.getMsg(ctx, msgGetRequest{NextFor: subject, Seq: fromSeq})
}

func (s *Stream) getMsg(ctx context.Context, req msgGetRequest) (*StoredMsg, error) {
	if info := s.CachedInfo(); info != nil && info.Config.AllowDirect {
		m, err := s.directGet(ctx, req)
		if !errors.Is(err, conn.ErrNoResponders) {
			return m, err
		}
		// Nobody serves Direct Get for the stream any more: the API says
		// why (a missing stream), or reads the message.
	}
	return s.apiGet(ctx, req)
}

// apiGet reads a message with STREAM.MSG.GET.
func (s *Stream) apiGet(ctx context.Context, req msgGetRequest) (*StoredMsg, error) {
	var resp msgGetResponse
	if err := s.js.request(ctx, "STREAM.MSG.GET."+s.name, req, &resp); err != nil {
		return nil, err
	}
	m := resp.Message
	if m == nil {
		return nil, fmt.Errorf("%w: reply without message", ErrBadResponse)
	}
	if err := proto.ValidateHeaderBlock(m.Header); err != nil {
		return nil, fmt.Errorf("%w: stored message header: %v", ErrBadResponse, err)
	}
	return &StoredMsg{Subject: m.Subject, Sequence: m.Sequence, Header: proto.HeaderFromBlock(m.Header), Data: m.Data, Time: m.Time}, nil
}

// directGet reads a message with Direct Get: a last-by-subject request for
// a literal subject goes to DIRECT.GET.<stream>.<subject> with an empty
// body, everything else to DIRECT.GET.<stream> with a JSON body.
func (s *Stream) directGet(ctx context.Context, req msgGetRequest) (*StoredMsg, error) {
	subject := s.direct
	var body []byte
	switch {
	case req.LastFor != "" && proto.IsLiteral(req.LastFor):
		subject += "." + req.LastFor
	case req.LastFor == "" && req.NextFor == "":
		// By sequence, the common case: no encoder needed.
		var b [32]byte
		body = append(strconv.AppendUint(append(b[:0], `{"seq":`...), req.Seq, 10), '}')
	default:
		var err error
		if body, err = json.Marshal(req); err != nil {
			return nil, fmt.Errorf("%w: %v", conn.ErrInvalidOption, err)
		}
	}
	m, err := s.js.rawRequest(ctx, subject, body)
	if err != nil {
		return nil, err
	}
	// One server of the stream's direct-get queue group answers, once.
	s.js.nc.ReuseReply(m)
	return parseDirectGet(m)
}

// directGetError is a status reply to a Direct Get: 404 matches
// ErrMsgNotFound, 408 (the server's "bad request") ErrBadRequest.
type directGetError struct {
	code int
	desc string
}

func (e *directGetError) Error() string {
	return fmt.Sprintf("jsapi: direct get: status %d %s", e.code, e.desc)
}

func (e *directGetError) Is(target error) bool {
	switch e.code {
	case 404:
		return target == ErrMsgNotFound
	case 408, 400:
		return target == ErrBadRequest
	}
	return false
}

// parseDirectGet turns a Direct Get reply into a StoredMsg. m belongs to
// the call and its memory is never reused: the subject and the stored
// header are views of its header block, which is cut in place before the
// fields the server appended (see internal/directget), and Data is its
// payload.
func parseDirectGet(m *conn.Msg) (*StoredMsg, error) {
	var r directget.Reply
	r.Parse(m.Header.Block())
	if r.Status != 0 {
		return nil, &directGetError{code: r.Status, desc: r.Description}
	}
	dm, err := r.Single()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	return &StoredMsg{Subject: dm.Subject, Sequence: dm.Sequence, Header: dm.Header, Data: m.Data, Time: dm.Time}, nil
}

// msgDeleteRequest is the body of STREAM.MSG.DELETE.
type msgDeleteRequest struct {
	Seq     uint64 `json:"seq"`
	NoErase bool   `json:"no_erase,omitempty"`
}

// DeleteMsg removes the message with sequence seq from the stream (its
// storage is marked deleted, not overwritten). It fails with an *APIError
// when the message does not exist or the stream denies deletes, and with
// ErrStreamNotFound for a missing stream.
func (s *Stream) DeleteMsg(ctx context.Context, seq uint64) error {
	return s.deleteMsg(ctx, msgDeleteRequest{Seq: seq, NoErase: true})
}

// SecureDeleteMsg removes the message with sequence seq and overwrites its
// stored data with random bytes. It fails like DeleteMsg.
func (s *Stream) SecureDeleteMsg(ctx context.Context, seq uint64) error {
	return s.deleteMsg(ctx, msgDeleteRequest{Seq: seq})
}

func (s *Stream) deleteMsg(ctx context.Context, req msgDeleteRequest) error {
	if req.Seq == 0 {
		return fmt.Errorf("%w: sequence 0", conn.ErrInvalidOption)
	}
	return s.js.request(ctx, "STREAM.MSG.DELETE."+s.name, req, nil)
}
