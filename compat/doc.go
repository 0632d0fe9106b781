// Package compat is natsio's compatibility suite: it runs natsio against
// the latest patch of every supported nats-server line (2.10, 2.11, 2.12,
// 2.14, 2.15), each started as a child process from a binary built from
// the Go module proxy, and checks the core protocol, JetStream, and every
// version-gated feature: on a server that has it the feature works, on one
// that lacks it natsio fails with a *jsapi.FeatureError before anything is
// sent, and nothing is stored or created.
//
// Run it with `make compat` from the repository root: it builds the
// servers (cached) and passes their paths in NATSIO_COMPAT_SERVERS
// ("v2.10.29=/path/nats-server,…"). The suite writes the feature × version
// table of docs/compatibility.md from the cells of the tests that passed,
// and fails when the committed table differs (NATSIO_COMPAT_UPDATE=1
// rewrites it).
package compat
