// Package jsapi is the JetStream control plane and publish path over a
// conn.Conn: stream and consumer management through the $JS.API request
// subjects, reading stored messages, publishing with a PubAck and
// expectations, typed API errors, and the JetStream message type (metadata
// and acknowledgements) shared by the consumer packages.
//
// A *JS is a lightweight, stateless view of a connection: create it with New
// as often as convenient. It runs no goroutine.
//
//	js, err := jsapi.New(nc)
//	st, err := js.CreateOrUpdateStream(ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
//	ack, err := js.Publish(ctx, "orders.new", data, jsapi.MsgID("o-1"))
//
// Publish returns the PubAck by value and allocates nothing.
//
// # Deadlines
//
// Every API call and publish waits for its answer until its context ends
// or, for a context without deadline, until the JS's Timeout (default 5 s)
// passes; either deadline gives an error matching conn.ErrTimeout and
// context.DeadlineExceeded, and a canceled context one matching
// context.Canceled.
//
// # Consumers
//
// ConsumerConfig describes a consumer at the server. Its zero AckPolicy
// means AckExplicit: every consumer natsio creates acknowledges each
// message unless AckNone or AckAll is asked for by name. The consumer
// packages read them: pull (Fetch, Next, Messages, Consume) and ordered.
//
// # Errors
//
// Every API error is an *APIError carrying the server's code, err_code and
// description; it matches the sentinel of its err_code with errors.Is
// (ErrStreamNotFound, ErrWrongLastSequence, …). 10071 and 10164 are both
// ErrWrongLastSequence.
//
// # Server versions
//
// A call that uses a feature newer than the server (a Feature: per-message
// TTL needs 2.11, counters 2.12, a consumer reset 2.14, …) fails with a
// *FeatureError matching ErrServerTooOld before anything is sent, rather
// than have the server ignore the feature or leave the request
// unanswered. The server's API level comes from its INFO, or for a JS
// with a Domain or APIPrefix from $JS.API.INFO (asked once); requests
// whose body uses a gated field also carry Nats-Required-Api-Level, and a
// server's refusal of it (412, err_code 10185) is the same *FeatureError.
// docs/compatibility.md has the table, feature by server version.
//
// # Wire conventions
//
// Durations travel as integer nanoseconds, times as RFC 3339 strings, enums
// as lower-case strings. Configurations keep JSON fields this version does
// not know, so a read-modify-write through an older client loses nothing.
package jsapi
