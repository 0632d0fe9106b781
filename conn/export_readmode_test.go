package conn

// ReadMode names who reads the connection's socket (readmode.go): "idle"
// or "held" before the reader goroutine runs, "wanted" when it is to
// start, "background" once it runs, "" while disconnected.
func ReadMode(nc *Conn) string {
	nc.mu.Lock()
	l := nc.link
	nc.mu.Unlock()
	if l == nil {
		return ""
	}
	return [...]string{readIdle: "idle", readHeld: "held", readWanted: "wanted", readBackground: "background"}[l.mode.Load()]
}
