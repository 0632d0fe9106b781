package conn

// NumSubs reports how many subscriptions nc holds (the request inbox and
// RequestMany inboxes included).
func NumSubs(nc *Conn) int {
	nc.subMu.RLock()
	defer nc.subMu.RUnlock()
	return len(nc.subs)
}

// VersionAtLeast is versionAtLeast, for Trace's server version check.
var VersionAtLeast = versionAtLeast
