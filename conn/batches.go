package conn

import (
	"context"
	"fmt"
	"reflect"
	"unsafe"
)

// Batches is a subscription whose messages are built straight into values
// of a type of the caller's, T, that holds a Msg: a layer that wraps each
// message in a struct of its own (its acknowledgement state, say) gets
// them without an allocation or a copy per message beyond the
// connection's own. SubscribeBatchesOf makes one.
//
// Next must not be called from more than one goroutine at once; the
// Subscription it wraps may be used concurrently, as any other.
type Batches[T any] struct {
	sub *Subscription
	off uintptr // where T holds its Msg
	raw []*Msg  // the connection's batch, handed back to NextBatch
	out []*T    // the same messages, as Ts
}

// SubscribeBatchesOf subscribes to subject for messages read in batches
// with Next, each delivered in a T that shell supplies. T must hold
// exactly one Msg by value (usually embedded, possibly inside an embedded
// struct); the connection fills that one, and Next returns the Ts.
//
// shell is called on the goroutine that reads the connection, one call at
// a time, before a message is queued, and must not block. Given nil it
// returns a fresh T that nothing else references (its Msg is
// overwritten): carving Ts from arrays of the caller's saves an
// allocation per message. It must never return nil: the connection has
// nowhere to put the message, and panics. With lent, the messages are lent: their fields
// are views of recycled memory, valid only until the next Next, and shell
// is also given a T of an earlier batch to prepare for reuse (it returns
// that one, or another fresh one); without, every T is the receiver's.
//
// The subscription has Subscribe's pending limits. A nil shell, or a T
// that does not hold exactly one Msg, fails with ErrInvalidOption before
// anything is sent; otherwise it fails like Subscribe.
func SubscribeBatchesOf[T any](nc *Conn, subject string, lent bool, shell func(reuse *T) *T) (*Batches[T], error) {
	if shell == nil {
		return nil, invalid("nil shell")
	}
	off, ok := msgOffset(reflect.TypeFor[T]())
	if !ok {
		return nil, invalid(fmt.Sprintf("%s does not hold exactly one conn.Msg by value", reflect.TypeFor[T]()))
	}
	b := &Batches[T]{off: off}
	alloc := func() *Msg { return b.msgOf(shell(nil)) }
	var lend func(reuse *Msg) *Msg
	if lent {
		lend = func(reuse *Msg) *Msg {
			if reuse == nil {
				return alloc()
			}
			return b.msgOf(shell(b.of(reuse)))
		}
	}
	sub, err := nc.register(subject, "", nil, deliverQueue, nil, alloc, lend, lent)
	if err != nil {
		return nil, err
	}
	b.sub = sub
	return b, nil
}

// msgOf is the Msg t holds. A nil t is a broken shell: the reader
// goroutine cannot go on without the memory it was promised.
func (b *Batches[T]) msgOf(t *T) *Msg {
	if t == nil {
		panic("conn: SubscribeBatchesOf: shell returned nil")
	}
	return (*Msg)(unsafe.Add(unsafe.Pointer(t), b.off))
}

// of is the T that holds m. Every Msg of b's subscription came from
// msgOf (the reader builds each in memory from alloc or lend), and
// msgOffset proved the Msg lies inside T at off, so the result points
// into the same object.
func (b *Batches[T]) of(m *Msg) *T {
	return (*T)(unsafe.Add(unsafe.Pointer(m), -int(b.off)))
}

// msgOffset is where a value of type t holds its one Msg: t itself, or a
// struct with exactly one Msg among its fields and the fields of the
// structs it holds by value.
func msgOffset(t reflect.Type) (uintptr, bool) {
	offs := msgOffsets(t, 0, nil)
	if len(offs) != 1 {
		return 0, false
	}
	return offs[0], true
}

var msgType = reflect.TypeFor[Msg]()

func msgOffsets(t reflect.Type, base uintptr, offs []uintptr) []uintptr {
	switch {
	case t == msgType:
		return append(offs, base)
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			offs = msgOffsets(f.Type, base+f.Offset, offs)
		}
	}
	return offs
}

// Subscription returns the underlying subscription: for its subject,
// pending limits, Unsubscribe and Drain. Do not read it with NextBatch,
// Messages or NextMsg.
func (b *Batches[T]) Subscription() *Subscription { return b.sub }

// Next waits until at least one message is queued, then returns every
// queued message, in order, in a slice valid until the next call (and,
// for a lent subscription, the messages with it). A done ctx ends it with
// ctx's error, messages queued or not; at the end of the subscription it
// returns ErrBadSubscription (or the close error). Once its slices have
// grown to the batch size it allocates nothing.
func (b *Batches[T]) Next(ctx context.Context) ([]*T, error) {
	// The last batch is done with: drop it before waiting, so that its
	// messages (and the arrays they were carved from) are not kept alive
	// while nothing arrives.
	clear(b.out)
	raw, err := b.sub.nextBatch(ctx, b.raw)
	b.raw = raw
	if err != nil {
		return nil, err
	}
	b.out = b.out[:0]
	for _, m := range raw {
		b.out = append(b.out, b.of(m))
	}
	return b.out, nil
}
