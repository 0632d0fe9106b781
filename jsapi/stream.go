package jsapi

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"sync"

	"github.com/natsio/natsio/conn"
)

// Stream is a handle on a stream: its name and the information last
// fetched. It is safe for concurrent use. Operations address the stream
// by name; they do not check that the handle is current.
type Stream struct {
	js   *JS
	name string
	// direct is the Direct Get subject, prefix + "DIRECT.GET." + name.
	direct string

	mu   sync.Mutex
	info *StreamInfo
}

func newStream(js *JS, info *StreamInfo) *Stream {
	return &Stream{js: js, name: info.Config.Name, info: info, direct: js.prefix + "DIRECT.GET." + info.Config.Name}
}

// Name returns the stream's name.
func (s *Stream) Name() string { return s.name }

// CachedInfo returns the information fetched last (by the call that made
// the handle or by Info), without I/O. Treat it as read-only.
func (s *Stream) CachedInfo() *StreamInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

func (s *Stream) setInfo(info *StreamInfo) {
	s.mu.Lock()
	s.info = info
	s.mu.Unlock()
}

// streamCreateResponse is the reply to STREAM.CREATE and STREAM.UPDATE.
type streamCreateResponse struct {
	StreamInfo
	DidCreate bool `json:"did_create,omitempty"`
}

// CreateStream creates a stream. Creating a stream that exists with the
// same configuration succeeds and changes nothing; with a different one it
// fails with an error matching ErrStreamNameInUse. An invalid name fails
// with ErrInvalidName before any I/O; an invalid configuration with the
// server's error (ErrSubjectOverlap, or another *APIError).
func (js *JS) CreateStream(ctx context.Context, cfg StreamConfig) (*Stream, error) {
	if err := ValidateName(cfg.Name); err != nil {
		return nil, err
	}
	var resp streamCreateResponse
	if err := js.requestFeature(ctx, cfg.feature(), "STREAM.CREATE."+cfg.Name, cfg, &resp); err != nil {
		return nil, err
	}
	return newStream(js, &resp.StreamInfo), nil
}

// UpdateStream replaces the configuration of an existing stream. It fails
// with ErrStreamNotFound when there is no such stream, with ErrInvalidName
// before any I/O, and with the server's error for a change it refuses
// (for example a different storage type).
func (js *JS) UpdateStream(ctx context.Context, cfg StreamConfig) (*Stream, error) {
	if err := ValidateName(cfg.Name); err != nil {
		return nil, err
	}
	var resp streamCreateResponse
	if err := js.requestFeature(ctx, cfg.feature(), "STREAM.UPDATE."+cfg.Name, cfg, &resp); err != nil {
		return nil, err
	}
	return newStream(js, &resp.StreamInfo), nil
}

// createOrUpdateAttempts bounds CreateOrUpdateStream's retries against
// concurrent creators and deleters.
const createOrUpdateAttempts = 5

// CreateOrUpdateStream makes the stream exist with cfg: it updates the
// stream, creates it when it does not exist, and updates it again when a
// concurrent caller created it first. It never fails with
// ErrStreamNameInUse; it fails like UpdateStream otherwise.
func (js *JS) CreateOrUpdateStream(ctx context.Context, cfg StreamConfig) (*Stream, error) {
	if err := ValidateName(cfg.Name); err != nil {
		return nil, err
	}
	for range createOrUpdateAttempts {
		st, err := js.UpdateStream(ctx, cfg)
		if !errors.Is(err, ErrStreamNotFound) {
			return st, err
		}
		if st, err = js.CreateStream(ctx, cfg); !errors.Is(err, ErrStreamNameInUse) {
			return st, err
		}
		// Created concurrently (with another configuration): update.
	}
	// Still churning (created and deleted by others): a last update.
	return js.UpdateStream(ctx, cfg)
}

// Stream fetches the information of a stream and returns a handle on it.
// It fails with ErrStreamNotFound when there is no such stream and with
// ErrInvalidName before any I/O.
func (js *JS) Stream(ctx context.Context, name string) (*Stream, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	info, err := js.streamInfo(ctx, name, streamInfoRequest{})
	if err != nil {
		return nil, err
	}
	return newStream(js, info), nil
}

// DeleteStream deletes a stream with its messages and consumers. It fails
// with ErrStreamNotFound when there is no such stream and with
// ErrInvalidName before any I/O.
func (js *JS) DeleteStream(ctx context.Context, name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	return js.request(ctx, "STREAM.DELETE."+name, nil, nil)
}

// streamNamesRequest is the body of STREAM.NAMES and STREAM.LIST.
type streamNamesRequest struct {
	Offset  int    `json:"offset"`
	Subject string `json:"subject,omitempty"`
}

type streamNamesResponse struct {
	apiPaged
	Streams []string `json:"streams"`
}

type streamListResponse struct {
	apiPaged
	Streams []*StreamInfo `json:"streams"`
	// Missing lists streams that are offline or did not answer in time;
	// they take places in the listing's order.
	Missing []string `json:"missing,omitempty"`
}

// paged yields the items of a paged listing. page(offset) returns one
// page of items, how many entries of the listing the page covers (more
// than len(items) when the server reports some as missing or offline) and
// the paging envelope; paging goes on until the offset reaches the total,
// a page covers nothing, or the server did not honour the offset. An error
// is yielded once, as the last pair.
func paged[T any](page func(offset int) (items []T, covered int, p apiPaged, err error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		offset := 0
		for {
			items, covered, p, err := page(offset)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if covered == 0 || p.Offset != offset {
				return
			}
			if offset += covered; offset >= p.Total {
				return
			}
		}
	}
}

// StreamNames yields the names of the account's streams, in name order,
// requesting further pages as the loop advances. subjectFilter, when not
// empty, keeps the streams whose subjects overlap it. A failed request is
// yielded as a final ("", err). The iterator is meant to be ranged over
// once: ranging again lists again, with the same ctx. Streams created or
// deleted while paging may be missed or seen twice.
func (js *JS) StreamNames(ctx context.Context, subjectFilter string) iter.Seq2[string, error] {
	return paged(func(offset int) ([]string, int, apiPaged, error) {
		var resp streamNamesResponse
		err := js.request(ctx, "STREAM.NAMES", streamNamesRequest{Offset: offset, Subject: subjectFilter}, &resp)
		return resp.Streams, len(resp.Streams), resp.apiPaged, err
	})
}

// Streams yields the information of the account's streams, like
// StreamNames. Streams the server reports as offline, or whose information
// did not arrive in time (in a cluster), are skipped.
func (js *JS) Streams(ctx context.Context, subjectFilter string) iter.Seq2[*StreamInfo, error] {
	return paged(func(offset int) ([]*StreamInfo, int, apiPaged, error) {
		var resp streamListResponse
		err := js.request(ctx, "STREAM.LIST", streamNamesRequest{Offset: offset, Subject: subjectFilter}, &resp)
		return resp.Streams, len(resp.Streams) + len(resp.Missing), resp.apiPaged, err
	})
}

// StreamNameBySubject returns the name of the stream that captures subject
// (which may be a wildcard: the first stream, in name order, whose subjects
// overlap it). It fails with an error matching ErrStreamNotFound when no
// stream does.
func (js *JS) StreamNameBySubject(ctx context.Context, subject string) (string, error) {
	if subject == "" {
		return "", fmt.Errorf("%w: empty subject", conn.ErrInvalidOption)
	}
	var resp streamNamesResponse
	if err := js.request(ctx, "STREAM.NAMES", streamNamesRequest{Subject: subject}, &resp); err != nil {
		return "", err
	}
	if len(resp.Streams) == 0 {
		return "", fmt.Errorf("%w: no stream captures %q", ErrStreamNotFound, subject)
	}
	return resp.Streams[0], nil
}

// streamInfoRequest is the body of STREAM.INFO.
type streamInfoRequest struct {
	Offset         int    `json:"offset,omitempty"`
	DeletedDetails bool   `json:"deleted_details,omitempty"`
	SubjectsFilter string `json:"subjects_filter,omitempty"`
}

type streamInfoResponse struct {
	apiPaged
	StreamInfo
}

// StreamInfoOpt adds detail to Stream.Info.
type StreamInfoOpt struct{ f func(*streamInfoRequest) }

// apply applies o to c; the zero StreamInfoOpt is invalid.
func (o StreamInfoOpt) apply(c *streamInfoRequest) error {
	if o.f == nil {
		return fmt.Errorf("%w: zero StreamInfoOpt", conn.ErrInvalidOption)
	}
	o.f(c)
	return nil
}

// SubjectsFilter asks for the message count of each subject matching
// filter (">" for all) in StreamState.Subjects. The server sends at most
// 100,000 subjects per reply; Info requests the further pages and merges
// them.
func SubjectsFilter(filter string) StreamInfoOpt {
	return StreamInfoOpt{func(r *streamInfoRequest) { r.SubjectsFilter = filter }}
}

// DeletedDetails asks for the sequences of interior deleted messages in
// StreamState.Deleted.
func DeletedDetails() StreamInfoOpt {
	return StreamInfoOpt{func(r *streamInfoRequest) { r.DeletedDetails = true }}
}

// streamInfo fetches a stream's information, following the pages of the
// subjects map.
func (js *JS) streamInfo(ctx context.Context, name string, req streamInfoRequest) (*StreamInfo, error) {
	var info *StreamInfo
	var subjects map[string]uint64
	for {
		var resp streamInfoResponse
		var body any
		if req != (streamInfoRequest{}) {
			body = req
		}
		if err := js.request(ctx, "STREAM.INFO."+name, body, &resp); err != nil {
			return nil, err
		}
		page := resp.State.Subjects
		if info == nil {
			info = &resp.StreamInfo
			subjects = page
		} else {
			if subjects == nil {
				subjects = make(map[string]uint64, len(page))
			}
			maps.Copy(subjects, page)
		}
		if req.SubjectsFilter == "" || len(page) == 0 || resp.Offset != req.Offset {
			break
		}
		if req.Offset += len(page); req.Offset >= resp.Total {
			break
		}
	}
	info.State.Subjects = subjects
	return info, nil
}

// Info fetches the stream's information, updates the cached copy and
// returns it. It fails with ErrStreamNotFound when the
// stream no longer exists.
func (s *Stream) Info(ctx context.Context, opts ...StreamInfoOpt) (*StreamInfo, error) {
	var req streamInfoRequest
	for _, o := range opts {
		if err := o.apply(&req); err != nil {
			return nil, err
		}
	}
	info, err := s.js.streamInfo(ctx, s.name, req)
	if err != nil {
		return nil, err
	}
	s.setInfo(info)
	return info, nil
}

// purgeRequest is the body of STREAM.PURGE.
type purgeRequest struct {
	Sequence uint64 `json:"seq,omitempty"`
	Subject  string `json:"filter,omitempty"`
	Keep     uint64 `json:"keep,omitempty"`
}

type purgeResponse struct {
	Success bool   `json:"success,omitempty"`
	Purged  uint64 `json:"purged"`
}

// PurgeOpt narrows Stream.Purge.
type PurgeOpt struct{ f func(*purgeRequest) }

// apply applies o to c; the zero PurgeOpt is invalid.
func (o PurgeOpt) apply(c *purgeRequest) error {
	if o.f == nil {
		return fmt.Errorf("%w: zero PurgeOpt", conn.ErrInvalidOption)
	}
	o.f(c)
	return nil
}

// PurgeSubject purges only messages whose subject matches subject (which
// may be a wildcard).
func PurgeSubject(subject string) PurgeOpt {
	return PurgeOpt{func(r *purgeRequest) { r.Subject = subject }}
}

// PurgeKeep keeps the newest n messages (per the subject filter, if
// any). It excludes PurgeSequence.
func PurgeKeep(n uint64) PurgeOpt {
	return PurgeOpt{func(r *purgeRequest) { r.Keep = n }}
}

// PurgeSequence purges messages below sequence seq (not seq itself). It
// excludes PurgeKeep.
func PurgeSequence(seq uint64) PurgeOpt {
	return PurgeOpt{func(r *purgeRequest) { r.Sequence = seq }}
}

// Purge removes the stream's messages (all, or as narrowed by the options)
// and returns how many it removed. PurgeKeep with PurgeSequence fails with
// conn.ErrInvalidOption before any I/O; a stream with DenyPurge fails with the
// server's error; a missing stream with ErrStreamNotFound.
func (s *Stream) Purge(ctx context.Context, opts ...PurgeOpt) (uint64, error) {
	var req purgeRequest
	for _, o := range opts {
		if err := o.apply(&req); err != nil {
			return 0, err
		}
	}
	if req.Keep > 0 && req.Sequence > 0 {
		return 0, fmt.Errorf("%w: purge keep and sequence are mutually exclusive", conn.ErrInvalidOption)
	}
	var body any
	if req != (purgeRequest{}) {
		body = req
	}
	var resp purgeResponse
	if err := s.js.request(ctx, "STREAM.PURGE."+s.name, body, &resp); err != nil {
		return 0, err
	}
	return resp.Purged, nil
}
