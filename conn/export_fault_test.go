package conn

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
