// Package jshook carries the machinery of package jsapi that natsio's own
// layers need, but users do not, to package internal/jsx.
//
// Package jsapi fills these variables while it initialises. They are typed
// any because this package cannot name jsapi's types (jsapi imports it);
// internal/jsx gives each its real type once, when it initialises, which
// Go runs after jsapi's initialisation. Nothing but jsapi and internal/jsx
// uses this package.
package jshook

// Set by package jsapi; see internal/jsx for what each does.
var (
	NewSlab       any
	FromSlab      any
	NewMsg        any
	ReuseAckReply any
	ApplyPubOpts  any
	ParsePubAck   any
)

// Set by package jsapi (observe.go).
var (
	Observer       any
	ObservePublish any
)
