// Package interop holds wire-compatibility tests between natsio and nats.go:
// KV buckets and object stores written by one client are read by the other,
// byte for byte. It lives in the bench module, the only place that may
// import nats.go, so that nats.go stays out of natsio's import graph.
//
//	cd bench && go test ./interop/
package interop
