package conn

import "sync"

// EventKind names a connection event.
type EventKind uint8

// Events.
const (
	EventConnected EventKind = iota + 1
	EventDisconnected
	EventReconnected
	EventClosed
	EventLameDuck
	EventDiscovered
	EventServerError
	EventSlowConsumer
	EventProtocolError
	// EventAttemptFailed reports a failed attempt to connect or reconnect
	// to Server, with the reason in Err (see RetryOnFailedConnect).
	EventAttemptFailed
)

var eventNames = [...]string{
	EventConnected: "connected", EventDisconnected: "disconnected",
	EventReconnected: "reconnected", EventClosed: "closed", EventLameDuck: "lame duck",
	EventDiscovered: "servers discovered", EventServerError: "server error",
	EventSlowConsumer: "slow consumer", EventProtocolError: "protocol error",
	EventAttemptFailed: "attempt failed",
}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return "event(?)"
}

// Event reports a change of connection state or an asynchronous error.
type Event struct {
	Kind EventKind
	// Server is the URL (without credentials) the event concerns.
	Server string
	// Err is the reason: why a connection was lost or closed, the server's
	// -ERR, the slow consumer's ErrSlowConsumer.
	Err error
	// Sub is the subscription of a slow-consumer or permission event.
	Sub *Subscription
}

// eventQueueCap bounds queued events; beyond it events are dropped and
// counted.
const eventQueueCap = 1024

// eventQueue runs the user's event handler on one goroutine, in order.
type eventQueue struct {
	mu      sync.Mutex
	q       []Event
	wake    chan struct{}
	f       func(Event)
	dropped func()
}

func (e *eventQueue) push(ev Event) {
	if e == nil {
		return
	}
	e.mu.Lock()
	if len(e.q) >= eventQueueCap {
		e.mu.Unlock()
		e.dropped()
		return
	}
	e.q = append(e.q, ev)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// run delivers events until stop is closed, then delivers what is left.
func (e *eventQueue) run(stop <-chan struct{}) {
	for {
		select {
		case <-e.wake:
		case <-stop:
			e.drain()
			return
		}
		e.drain()
	}
}

func (e *eventQueue) drain() {
	for {
		e.mu.Lock()
		q := e.q
		e.q = nil
		e.mu.Unlock()
		if len(q) == 0 {
			return
		}
		for _, ev := range q {
			e.f(ev)
		}
	}
}

// slowConsumer reports the start of a slow-consumer episode on s.
func (nc *Conn) slowConsumer(s *Subscription) {
	nc.opts.logger.Warn("nats: slow consumer, dropping messages", "subject", s.Subject)
	nc.ev.push(Event{Kind: EventSlowConsumer, Sub: s, Err: ErrSlowConsumer})
}
