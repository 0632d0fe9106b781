package pull

import "github.com/natsio/natsio/internal/consumectl"

// ConsumeContext controls a Consume, of a pull consumer (Consumer.Consume)
// or an ordered one (ordered.Consumer.Consume). Its methods may be called
// from any goroutine, the handler's included, and more than once.
type ConsumeContext consumectl.Control

// ctl is cc as the state it is defined on.
func (cc *ConsumeContext) ctl() *consumectl.Control { return (*consumectl.Control)(cc) }

// Stop ends the Consume: the handler is not called again once the call
// under way, if any, has returned. A pull consumer's pulls are withdrawn
// at the server before Stop returns (an UNSUB and a round trip, bounded by
// the API timeout), so a message published after that goes to the next
// reader at once; messages already sent and not yet handled are
// redelivered after AckWait. An ordered consumer drops the messages
// received and not handled; a later read resumes after the last one
// handled. Stop does not wait for the handler: Closed tells when
// everything has ended. After Stop, Err reports nil.
func (cc *ConsumeContext) Stop() { cc.ctl().Stop() }

// Drain ends the Consume in order: no more messages are asked for, the
// handler is given every message received until the server has confirmed
// the end of the subscription (see DrainOn), and then the Consume ends (an
// ordered consumer is not recreated meanwhile). Messages a pull consumer's
// server had not sent by then are redelivered after AckWait; a later read
// of an ordered consumer resumes after the last message handled. Drain
// does not wait: Closed tells when the handler has returned for the last
// time. After Drain, Err reports nil, unless a terminal error ended the
// Consume before the drain was complete. A Stop after Drain ends it at
// once.
func (cc *ConsumeContext) Drain() { cc.ctl().Drain() }

// Closed returns a channel that is closed once the handler has returned
// for the last time and every goroutine of the Consume has ended (for an
// ordered consumer, once its server-side consumer has been deleted, best
// effort).
func (cc *ConsumeContext) Closed() <-chan struct{} { return cc.ctl().Closed() }

// Err reports why the Consume ended, once Closed is closed (nil before):
// nil after Stop, Drain or the end of its context, otherwise the terminal
// error — for a pull consumer ErrConsumerDeleted (also what the server
// tells waiting pulls when the stream is deleted), jsapi.ErrStreamNotFound,
// ErrPushConsumer, ErrBadPull, conn.ErrClosed; for an ordered one
// jsapi.ErrStreamNotFound, ordered.ErrConsumerDeleted, ErrNoMessages (its
// IdleTimeout), conn.ErrClosed.
func (cc *ConsumeContext) Err() error { return cc.ctl().Err() }
