// Package kv is a JetStream key-value store, wire-compatible with the
// buckets of nats.go's jetstream package (ADR-8): a bucket written by
// either client is read by the other, byte for byte.
//
//	js, _ := jsapi.New(nc)
//	b, err := kv.CreateBucket(ctx, js, kv.Config{Bucket: "config", History: 5})
//	rev, err := b.Put(ctx, "feature.dark-mode", []byte("on"))
//	e, err := b.Get(ctx, "feature.dark-mode")            // e.Value, e.Revision
//	rev, err = b.Update(ctx, "feature.dark-mode", []byte("off"), e.Revision) // CAS
//	for e, err := range b.Watch(ctx, "feature.>") { // nil entry: initial values done
//		use(e, err)
//	}
//
// # Layout
//
// A bucket B is the stream KV_B on the subjects $KV.B.>; the key k is the
// subject $KV.B.k and its revision is the stream sequence. A delete is an
// empty message with the header KV-Operation: DEL, a purge one with
// KV-Operation: PURGE and Nats-Rollup: sub (which removes the older
// revisions). Create and Update publish with
// Nats-Expected-Last-Subject-Sequence. With Config.LimitMarkerTTL the
// server writes markers (Nats-Marker-Reason) when keys expire; they read as
// purges (MaxAge, Purge) or deletes (Remove).
//
// # Reads
//
// Get reads with Direct Get (any replica, or a mirror, answers) when the
// bucket allows it, which every bucket created by this package or a
// current nats.go does. Watches, Keys, ListKeys, History and PurgeDeletes
// read through an ordered consumer (package ordered) with a last-per-subject
// start and headers only where values are not needed. A watch begins when
// Watch returns, not when its loop starts: writes made in between come
// after the end-of-initial-values marker, each as its own entry. Get
// falls back to a read through the stream leader when nobody serves
// Direct Get for the bucket (its stream no longer allows it, or was
// deleted: then ErrBucketNotFound).
//
// # Errors
//
// Names are validated before any I/O (ErrInvalidBucketName,
// ErrInvalidKey). A missing key is ErrKeyNotFound; a deleted one
// ErrKeyDeleted, which also matches ErrKeyNotFound. Create on a key with a
// value fails with ErrKeyExists; a compare-and-set conflict (Update,
// Delete with LastRevision, Purge with PurgeLastRevision) with
// ErrRevisionMismatch — whichever of the two wrong-last-sequence codes
// (10071, 10164) the server used. Both
// also match jsapi.ErrWrongLastSequence.
//
// # Codecs
//
// Keys are subject tokens, so spaces, '@' or unicode cannot be keys as
// they are. WithCodecs gives a Bucket seen through a key codec and a value
// codec (Base64Codec, PathCodec, chained with ChainKeyCodecs): the
// application's keys go in and come out of Put, Get, Keys and watches, the
// encoded ones are stored, in the forms orbit.go's kvcodec uses.
//
// # Cost
//
// Put and Get build subjects in pooled buffers and decode the reply in
// place: with a context that has a deadline, Get allocates its Entry and
// Put its PubAck's stream name (see the benchmarks).
package kv
