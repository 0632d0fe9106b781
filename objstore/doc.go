// Package objstore is a JetStream object store, wire-compatible with the
// object stores of nats.go's jetstream package (ADR-20): objects written
// by either client are read by the other, byte for byte.
//
//	js, _ := jsapi.New(nc)
//	s, err := objstore.CreateStore(ctx, js, objstore.Config{Bucket: "artifacts"})
//	file, err := os.Open("model.bin")
//	info, err := s.Put(ctx, objstore.Meta{Name: "model.bin", Description: "weights"}, file)
//	r, err := s.Get(ctx, "model.bin")   // io.ReadCloser, digest checked at EOF
//	defer r.Close()
//	_, err = io.Copy(os.Stdout, r)
//
// # Layout
//
// A store B is the stream OBJ_B on $O.B.C.> and $O.B.M.>. An object's data
// is a sequence of chunks (128 KiB by default) on $O.B.C.<nuid>, a fresh
// NUID for every Put; its meta is one JSON message on
// $O.B.M.<padded base64url of the name>, written last with Nats-Rollup: sub
// so that only the latest meta is kept. The meta carries the size, the
// chunk count and the digest "SHA-256=<padded base64url>". A delete
// replaces the meta with one marked deleted and purges the chunks; a link
// is meta whose options name another object or store.
//
// # Memory and failure
//
// Put streams from an io.Reader through one chunk buffer and keeps a
// bounded window of chunks in flight; Get reads through an ordered consumer
// with a bounded number of chunks requested. Neither holds an object in
// memory (GetBytes does, by design). A Put that fails midway purges its
// chunks; since the meta is written last, no partial object is ever
// visible. Replacing an object purges the old object's chunks.
package objstore
