package objstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nuid"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/pubwin"
)

// putInflight bounds the chunk data a Put has sent but not yet had
// acknowledged; getInflight the data a Get keeps requested.
const (
	putInflight = 8 << 20
	getInflight = 4 << 20
)

// window is how many chunks of size chunk fit in bytes (at least 2).
func window(chunk uint32, bytes int) int { return max(2, min(256, bytes/int(max(chunk, 1)))) }

// Put stores the data read from r until io.EOF as the object meta.Name,
// replacing an object of that name (whose chunks are then purged). It
// reads and sends one chunk at a time, keeping at most about 8 MiB
// unacknowledged, so its memory does not grow with the object; it computes
// the SHA-256 digest on the way and writes the meta last, so the object
// becomes visible only once all of its data is stored.
//
// When reading, sending, or ctx fails midway, Put purges the chunks it
// stored and returns the error: no part of the new object is left, and a
// replaced object stays as it was. A read error is returned as is. When
// the meta stored under meta.Name fails GetInfo's checks
// (ErrBadObjectMeta, ErrMetaMismatch), Put stores and purges nothing.
func (s *Store) Put(ctx context.Context, meta Meta, r io.Reader) (*Info, error) {
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	if meta.Name == "" {
		return nil, ErrNameRequired
	}
	chunk := uint32(DefaultChunkSize)
	if meta.Opts != nil {
		if meta.Opts.Link != nil {
			return nil, ErrLinkNotAllowed
		}
		if meta.Opts.ChunkSize > 0 {
			chunk = meta.Opts.ChunkSize
		}
	}
	if mp := s.js.Conn().MaxPayload(); int64(chunk) > mp {
		return nil, fmt.Errorf("%w: chunk size %d above the server's max payload %d", conn.ErrInvalidOption, chunk, mp)
	}
	meta.Opts = &MetaOptions{ChunkSize: chunk}
	if r == nil {
		r = bytes.NewReader(nil)
	}
	old, err := s.GetInfo(ctx, meta.Name, ShowDeleted())
	if err != nil && !errors.Is(err, ErrObjectNotFound) {
		return nil, err
	}
	info := &Info{Meta: meta, Bucket: s.name, NUID: nuid.Next()}
	if err := s.putChunks(ctx, info, r, chunk); err != nil {
		if perr := s.purgeChunks(ctx, info.NUID); perr != nil {
			err = errors.Join(err, fmt.Errorf("objstore: purging the partial object: %w", perr))
		}
		return nil, err
	}
	if err := s.publishMeta(ctx, info); err != nil {
		if perr := s.purgeChunks(ctx, info.NUID); perr != nil {
			err = errors.Join(err, fmt.Errorf("objstore: purging the partial object: %w", perr))
		}
		return nil, err
	}
	info.ModTime = time.Now().UTC()
	if old != nil && !old.Deleted && old.NUID != info.NUID {
		// The replaced object's data. Best effort: the new object is
		// stored either way.
		_ = s.purgeChunks(ctx, old.NUID)
	}
	return info, nil
}

// putChunks sends the data of r as chunks on info's chunk subject and sets
// the size, chunk count and digest of info.
func (s *Store) putChunks(ctx context.Context, info *Info, r io.Reader, chunk uint32) (err error) {
	subj, err := s.chunkSubject(info.NUID)
	if err != nil {
		return err
	}
	buf := make([]byte, chunk)
	h := sha256.New()
	defer func() { info.Digest = digestOf(h) }()

	k, rerr := io.ReadFull(r, buf)
	last := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
	if rerr != nil && !last {
		return rerr
	}
	if last {
		// At most one chunk: a plain publish, no window.
		if k > 0 {
			h.Write(buf[:k])
			if _, err := s.js.Publish(ctx, subj, buf[:k]); err != nil {
				return s.pubErr(err)
			}
			info.Size, info.Chunks = uint64(k), 1
		}
		return nil
	}

	n := window(chunk, putInflight)
	w, err := pubwin.New(s.js, pubwin.MaxPending(n), pubwin.StallWait(time.Minute), pubwin.AckTimeout(30*time.Second))
	if err != nil {
		return err
	}
	defer w.Close()
	ring := make([]*pubwin.Future, n)
	head, inflight := 0, 0
	wait := func(ctx context.Context) error {
		f := ring[head]
		ring[head] = nil
		head = (head + 1) % n
		inflight--
		_, err := f.Wait(ctx)
		return s.pubErr(err)
	}
	defer func() {
		if err == nil {
			return
		}
		// Let what is in flight land (or fail) before the caller purges,
		// so that no chunk arrives after the purge.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for inflight > 0 {
			_ = wait(cctx)
		}
	}()
	for {
		if k > 0 {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
			h.Write(buf[:k])
			if inflight == n {
				if err := wait(ctx); err != nil {
					return err
				}
			}
			f, err := w.Publish(ctx, subj, buf[:k])
			if err != nil {
				return s.pubErr(err)
			}
			ring[(head+inflight)%n] = f
			inflight++
			info.Size += uint64(k)
			info.Chunks++
		}
		if last {
			break
		}
		k, rerr = io.ReadFull(r, buf)
		last = rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		if rerr != nil && !last {
			return rerr
		}
	}
	for inflight > 0 {
		if err := wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) pubErr(err error) error { return kind.PubErr(err) }

// PutBytes stores data as the object name.
func (s *Store) PutBytes(ctx context.Context, name string, data []byte) (*Info, error) {
	return s.Put(ctx, Meta{Name: name}, bytes.NewReader(data))
}

// PutString stores data as the object name.
func (s *Store) PutString(ctx context.Context, name, data string) (*Info, error) {
	return s.Put(ctx, Meta{Name: name}, strings.NewReader(data))
}

// PutFile stores the file at path as the object name (nats.go's PutFile
// names the object after the path: pass the path as name to match).
func (s *Store) PutFile(ctx context.Context, name, path string) (*Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return s.Put(ctx, Meta{Name: name}, f)
}
