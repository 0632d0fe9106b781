// Package testserver starts embedded nats-server instances for tests.
//
// The servers run in-process (github.com/nats-io/nats-server/v2/server),
// listen on loopback only and always on random ports, keep their
// JetStream data in a per-test temporary directory and are shut down
// automatically through t.Cleanup. Nothing here uses a NATS client
// library: callers talk to the servers with their own client code.
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
//
// Server logs are discarded by default. Set the environment variable
// NATSIO_TEST_SERVER_LOG=1 to send them to t.Log ("debug" or "trace"
// instead of "1" raise the level; Options.Debug and Options.Trace do the
// same per server once logging is on).
//
// This package embeds a complete NATS server and is meant for tests only:
// it must only be imported from _test.go files and from programs under
// cmd/, never from library code.
package testserver
