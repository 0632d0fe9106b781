//go:build !linux

package conn

import "net"

// fastConn returns c: the raw system-call path is Linux-only
// (fastio_linux.go).
func fastConn(c net.Conn) net.Conn { return c }

// isFastConn reports false: fastConn wraps nothing here.
func isFastConn(net.Conn) bool { return false }
