package objstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// maxLinkDepth bounds how many links Get follows (AddLink makes no chains;
// stored meta from elsewhere might).
const maxLinkDepth = 8

// Get returns a reader of an object's data, following a link to an object
// (in this or another store). ctx bounds the whole read. The reader checks
// the size and the SHA-256 digest at the end: its last Read returns io.EOF
// only if both match, else ErrSizeMismatch or ErrDigestMismatch. It
// fails with ErrObjectNotFound for a missing or deleted object and
// ErrLinkToBucket for a link to a whole store. Close the reader when
// done.
func (s *Store) Get(ctx context.Context, name string, opts ...Opt) (*Reader, error) {
	return s.get(ctx, name, opts, 0)
}

func (s *Store) get(ctx context.Context, name string, opts []Opt, depth int) (*Reader, error) {
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	info, err := s.GetInfo(ctx, name, opts...)
	if err != nil {
		return nil, err
	}
	if info.IsLink() {
		l := info.Opts.Link
		if l.Name == "" {
			return nil, ErrLinkToBucket
		}
		if depth >= maxLinkDepth {
			return nil, fmt.Errorf("%w: links nested deeper than %d", ErrBadObjectMeta, maxLinkDepth)
		}
		target := s
		if l.Bucket != s.name {
			if target, err = Bind(ctx, s.js, l.Bucket); err != nil {
				return nil, err
			}
		}
		return target.get(ctx, l.Name, nil, depth+1)
	}
	r := &Reader{info: info, h: sha256.New()}
	if info.Size == 0 {
		return r, nil
	}
	chunk := uint32(DefaultChunkSize)
	if info.Opts != nil && info.Opts.ChunkSize > 0 {
		chunk = info.Opts.ChunkSize
	}
	subj, err := s.chunkSubject(info.NUID)
	if err != nil {
		return nil, err
	}
	oc, err := ordered.New(ctx, s.js, s.stream.Name(), ordered.Config{
		FilterSubjects: []string{subj},
		DeliverPolicy:  jsapi.DeliverAll,
	})
	if err != nil {
		return nil, s.streamErr(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	r.cancel, r.oc = cancel, oc
	r.next, r.stop = iter.Pull2(oc.Messages(rctx, ordered.UntilDrained(),
		ordered.MaxMessages(window(chunk, getInflight)),
		// Hashing a chunk takes long enough for the next ones to be read
		// meanwhile (reading them inline is 7 % slower for 64 MiB).
		ordered.ReadAhead(true)))
	return r, nil
}

// Reader reads an object's data; see Store.Get. It is not safe for
// concurrent Reads, but Close may be called at any time.
type Reader struct {
	info   *Info
	h      hash.Hash
	cancel context.CancelFunc
	oc     *ordered.Consumer

	mu     sync.Mutex
	next   func() (*jsapi.Msg, error, bool)
	stop   func()
	cur    []byte
	n      uint64
	err    error
	closed bool
}

// Info returns the information of the object read (the link's target for
// a link).
func (r *Reader) Info() *Info { return r.info }

// Read reads the object's data; see Store.Get for how it ends.
func (r *Reader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.next == nil {
			r.err = r.verify()
			continue
		}
		m, err, ok := r.next()
		if !ok {
			r.next = nil
			continue
		}
		if err != nil {
			r.err = err
			if r.closed {
				r.err = errReaderClosed
			}
			continue
		}
		r.h.Write(m.Data)
		r.n += uint64(len(m.Data))
		if r.n > r.info.Size {
			r.err = fmt.Errorf("%w: more than %d bytes", ErrSizeMismatch, r.info.Size)
			continue
		}
		r.cur = m.Data
		if r.n == r.info.Size && m.Data != nil {
			// Every byte the meta names is read: the digest decides, and
			// the read ends here, without asking whether the stream holds
			// more of this object (a drained read's end costs a request).
			r.stop()
			r.next = nil
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// errReaderClosed is returned by Read after Close.
var errReaderClosed = errors.New("objstore: read of a closed reader")

// verify checks the size and digest once the data ended.
func (r *Reader) verify() error {
	if r.n != r.info.Size {
		return fmt.Errorf("%w: read %d of %d bytes", ErrSizeMismatch, r.n, r.info.Size)
	}
	if r.info.Size == 0 && r.info.Digest == "" {
		return io.EOF // a deleted object
	}
	want, err := decodeDigest(r.info.Digest)
	if err != nil {
		return err
	}
	var sum [sha256.Size]byte
	if !bytes.Equal(r.h.Sum(sum[:0]), want) {
		return ErrDigestMismatch
	}
	return io.EOF
}

// Close stops reading and releases the reader's consumer.
func (r *Reader) Close() error {
	if r.cancel != nil {
		r.cancel() // ends a Read blocked on the network
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		if r.stop != nil {
			r.stop()
		}
		if r.oc != nil {
			release(r.oc)
		}
		r.next = nil
		if r.err == nil {
			r.err = errReaderClosed
		}
		r.cur = nil
	}
	return nil
}

// release deletes the consumer ordered.New made for a Reader closed
// before its first Read, instead of leaving it to its inactive threshold.
// Once read, the consumer is gone (a read deletes its own), and release
// sends nothing.
func release(oc *ordered.Consumer) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = oc.Delete(ctx)
}

// GetBytes returns an object's data, verified.
func (s *Store) GetBytes(ctx context.Context, name string, opts ...Opt) ([]byte, error) {
	r, err := s.Get(ctx, name, opts...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var b bytes.Buffer
	b.Grow(int(min(r.info.Size, 64<<20)))
	if _, err := b.ReadFrom(r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// GetString returns an object's data as a string, verified.
func (s *Store) GetString(ctx context.Context, name string, opts ...Opt) (string, error) {
	b, err := s.GetBytes(ctx, name, opts...)
	return string(b), err
}

// GetFile writes an object's data to the file at path. The data goes to a
// temporary file in the same directory that replaces path only once the
// digest matched, so path never holds a partial or corrupt object; on any
// failure the temporary file is removed and path is left as it was. The
// file gets the permissions os.Create would give it: those of the file it
// replaces, or 0666 less the process's umask for a new one.
func (s *Store) GetFile(ctx context.Context, name, path string, opts ...Opt) (err error) {
	r, err := s.Get(ctx, name, opts...)
	if err != nil {
		return err
	}
	defer r.Close()
	perm, keep := os.FileMode(0o666), false // a new file's: the umask applies
	if fi, serr := os.Stat(path); serr == nil && fi.Mode().IsRegular() {
		perm, keep = fi.Mode().Perm(), true
	}
	f, err := createTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp", perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if keep {
		// The replaced file's bits, as they are: not narrowed by the umask.
		if err = f.Chmod(perm); err != nil {
			return err
		}
	}
	if _, err = io.Copy(f, r); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// createTemp creates a new file in dir named prefix followed by a random
// number, with permissions perm less the umask (os.CreateTemp's are 0600).
func createTemp(dir, prefix string, perm os.FileMode) (*os.File, error) {
	for range 10000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("objstore: no free temporary file name in %s", dir)
}
