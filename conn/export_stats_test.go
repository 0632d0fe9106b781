package conn

// LentBuffers reports how many 64 KiB buffers the connection made for lent
// messages: how the client lends them, not a counter of the connection, so
// it is not in Stats.
func LentBuffers(nc *Conn) uint64 { return nc.stats.lentBufs.Load() }
