// Package streamstore is what kv and objstore share as stores kept in a
// stream: a Kind (stream name prefix, listing subject and the store's own
// error values), the part of the stream configuration both map the same
// way, creating, updating, binding, deleting and listing the stream, the
// error that joins a store's error value with the server's, and the watch:
// an ordered consumer over a subject filter with the end-of-initial-values
// marker (internal/watchx), resolved from the watch options both offer.
package streamstore
