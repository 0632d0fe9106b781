package conn

import "net"

// SocketConn returns the TCP connection under the current link's TLS or
// WebSocket layers (nil while disconnected).
func SocketConn(nc *Conn) net.Conn {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.link == nil {
		return nil
	}
	return nc.link.base
}

// IsFastConn reports whether c is a connection wrapped for raw socket I/O.
func IsFastConn(c net.Conn) bool { return isFastConn(c) }

// RaceEnabled reports a build with the race detector.
const RaceEnabled = raceEnabled

// MsgOverhead is what the pending limits count per message on top of its
// bytes.
const MsgOverhead = msgOverhead

// Trace bounds per call.
const (
	TraceMaxReports = traceMaxReports
	TraceMaxBytes   = traceMaxBytes
	TraceMaxObjects = traceMaxObjects
)

// SetGossipHook makes f run each time the connection has parsed a gossiped
// server list, with the connection's lock released, until restore. Not for
// parallel tests.
func SetGossipHook(f func(*Conn)) (restore func()) {
	prev := gossipHook
	gossipHook = f
	return func() { gossipHook = prev }
}

// Writes reports how many socket writes the connection made after its
// handshakes.
func Writes(nc *Conn) uint64 { return nc.stats.writes.Load() }

// StdSocketIO makes the connection use net.TCPConn's own socket calls
// instead of the direct path on Linux.
var StdSocketIO = stdSocketIO

// LazyDelay is the longest a WriteLazy message waits for a write.
const LazyDelay = lazyDelay

// DecodeTrace decodes one message tracing report as Trace does.
var DecodeTrace = decodeTrace

// PendingPongs reports the PINGs (flushes and keepalives) whose PONG has not
// arrived on the current connection.
func PendingPongs(nc *Conn) int {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return len(nc.pongs)
}

// ServerTLSNames maps each pool entry's host:port to the name its TLS
// certificate would be verified against.
func ServerTLSNames(nc *Conn) map[string]string {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	out := make(map[string]string, len(nc.pool.servers))
	for _, s := range nc.pool.servers {
		out[s.addr()] = s.tlsName
	}
	return out
}

// NumSubs reports how many subscriptions nc holds (the request inbox and
// RequestMany inboxes included).
func NumSubs(nc *Conn) int {
	nc.subMu.RLock()
	defer nc.subMu.RUnlock()
	return len(nc.subs)
}

// VersionAtLeast is versionAtLeast, for Trace's server version check.
var VersionAtLeast = versionAtLeast
