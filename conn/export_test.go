package conn

// PendingRequests reports the requests waiting for a response.
func PendingRequests(nc *Conn) int {
	nc.resp.mu.Lock()
	defer nc.resp.mu.Unlock()
	return len(nc.resp.waiters)
}

// InlineReads reports how many requests read the socket themselves.
func InlineReads(nc *Conn) uint64 { return nc.stats.inlineReads.Load() }
