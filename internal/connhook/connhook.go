// Package connhook carries the machinery of package conn that natsio's
// own layers need, but users do not, to package internal/connx.
//
// Package conn fills these variables while it initialises, with method
// expressions and functions of its own. They are typed any because this
// package cannot name conn's types (conn imports it); internal/connx gives
// each its real type once, when it initialises, which Go runs after conn's
// initialisation. Nothing but conn and internal/connx uses this package.
package connhook

// Set by package conn; see internal/connx for what each does.
var (
	PublishNow       any
	PublishLazy      any
	RequestTimeout   any
	ReuseReply       any
	SubscribeBatches any
	SubscribeInline  any
	NextBatch        any
	StdSocketIO      any
	LazyDelay        any
	ServerLevel      any
	DecodeTrace      any
)

// Set by package conn (observe.go).
var (
	Observer          any
	PublishUnobserved any
	RequestUnobserved any
)
