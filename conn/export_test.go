package conn

import "net"

// PendingRequests reports the requests waiting for a response.
func PendingRequests(nc *Conn) int {
	nc.resp.mu.Lock()
	defer nc.resp.mu.Unlock()
	return len(nc.resp.waiters)
}

// InlineReads reports how many requests read the socket themselves.
func InlineReads(nc *Conn) uint64 { return nc.stats.inlineReads.Load() }

// AllowInlineReads lets requesters read any transport inline (the
// in-memory pipes of synctest tests keep working after a read deadline)
// until the returned function restores the default. Not for parallel tests.
func AllowInlineReads() (restore func()) {
	prev := inlineCapable
	inlineCapable = func(net.Conn) bool { return true }
	return func() { inlineCapable = prev }
}

// ReaderResumes reports how many times the reader goroutine took the
// reader role back after parking.
func ReaderResumes(nc *Conn) uint64 { return nc.stats.readerResumes.Load() }

// InlineBatches reports how many times a consumer read the socket itself.
func InlineBatches(nc *Conn) uint64 { return nc.stats.inlineBatches.Load() }

// ParkTimeouts reports how many times the parked reader goroutine's timer
// fired.
func ParkTimeouts(nc *Conn) uint64 { return nc.stats.parkTimeouts.Load() }

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
