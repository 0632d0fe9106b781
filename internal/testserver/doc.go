// Package testserver starts embedded nats-server instances for the
// repository's own tests. It is a thin layer over the public natstest
// package, which does the work, kept so that the tests written against its
// Options struct keep compiling: Start maps Options onto natstest options,
// and Server and Cluster wrap natstest's.
//
// The servers run in-process, listen on loopback only and always on random
// ports, keep their JetStream data in a per-test temporary directory and
// are shut down automatically through t.Cleanup.
//
// The entry points are:
//
//   - Start starts a single server; Server.Restart brings it back on the
//     same port with the same JetStream store.
//   - StartCluster starts an n-node JetStream cluster and waits until the
//     routes are up and a meta leader has been elected.
//   - GenerateCerts creates a throw-away CA with server and client
//     certificates for TLS and mutual TLS tests.
//   - NKeyUser, Operator and WriteCreds build nkey, operator/JWT and
//     creds-file based authentication setups.
//   - StartProcess runs a server in a child process, for benchmarks that
//     must count the client alone.
//
// Server logs are discarded by default. Set the environment variable
// NATSIO_TEST_SERVER_LOG=1 to send them to t.Log ("debug" or "trace"
// instead of "1" raise the level; Options.Debug and Options.Trace do the
// same per server once logging is on).
//
// New tests should use natstest directly. This package must only be
// imported from _test.go files and from programs under cmd/, never from
// library code.
package testserver
