// Package faultproxy is an in-process TCP proxy for fault-injection tests of
// a network client. It is intended for tests only and must not be used in
// production code.
//
// A [Proxy] listens on 127.0.0.1 (on a kernel-chosen port) and forwards every
// accepted connection to a target address. While traffic flows, a test can
// switch faults on and off, independently for each [Direction]:
//
//   - [Up] is client → server, [Down] is server → client.
//   - [Proxy.Stall] stops forwarding (data is held, not dropped, and the
//     connections stay open: a black hole) until the stall is lifted.
//   - [Proxy.Throttle] limits the forwarding rate with a token bucket.
//   - [Proxy.Chunk] splits forwarded data into writes of at most n bytes, to
//     exercise split-frame parsing in the client.
//   - [Proxy.Corrupt] installs a hook that may rewrite each forwarded chunk.
//   - [Proxy.InjectDown] writes raw bytes to every client as if they came from
//     the server.
//   - [Proxy.CutAll] abruptly closes every live connection and
//     [Proxy.Refuse] makes the proxy accept and immediately close new
//     connections, simulating a server that is down while keeping the port.
//
// Faults are read at every forwarded chunk, so toggling them takes effect on
// live connections. [Proxy.Close] closes the listener and all connections and
// returns only after every goroutine started by the proxy has exited.
//
// Typical use:
//
//	p, err := faultproxy.New("127.0.0.1:4222") // the server's address
//	if err != nil {
//		t.Fatal(err)
//	}
//	t.Cleanup(func() { p.Close() })
//	nc, err := conn.Connect(ctx, p.URL())
//	p.Stall(faultproxy.Down, true) // the server goes silent
package faultproxy
