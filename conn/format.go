package conn

import (
	"fmt"
	"io"
	"strconv"
)

// String describes the connection without its credentials: its name (the
// Name option), the server it is connected to (URL without user
// information) and its state, for example
//
//	nats connection "orders" to nats://10.0.0.1:4222 (connected)
//
// Passwords, tokens, JWTs and nkey seeds are never part of it.
func (nc *Conn) String() string {
	if nc == nil {
		return "<nil>"
	}
	name := ""
	if nc.opts.name != "" {
		name = " " + strconv.Quote(nc.opts.name)
	}
	// Never wait for nc.mu here: a String called under it (a logger in a
	// callback) would deadlock. Without the lock, no server and state.
	if !nc.mu.TryLock() {
		return "nats connection" + name
	}
	server, state := "", nc.state
	if nc.cur != nil {
		server = nc.cur.redacted()
	}
	nc.mu.Unlock()
	s := "nats connection" + name
	if server != "" {
		s += " to " + server
	}
	return s + " (" + state.String() + ")"
}

// Format prints String for every verb (%v, %+v, %#v, %s, %q quoted…),
// so that printing a *Conn never prints its fields, among them the
// credentials it was configured with.
func (nc *Conn) Format(f fmt.State, verb rune) {
	s := nc.String()
	if verb == 'q' {
		s = strconv.Quote(s)
	}
	_, _ = io.WriteString(f, s)
}

// GoString is String: %#v of a *Conn prints no field either.
func (nc *Conn) GoString() string { return nc.String() }

func (s connState) String() string {
	switch s {
	case stateConnecting:
		return "connecting"
	case stateConnected:
		return "connected"
	case stateReconnecting:
		return "reconnecting"
	case stateClosed:
		return "closed"
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}
