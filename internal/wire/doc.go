// Package wire holds the encoders of the NATS protocol that only natsio's
// own layers and test servers use: the PUB encoder without validation that
// the connection's publish path calls once it has checked the subject
// itself, and the server-side ops (INFO, MSG, HMSG, +OK, -ERR) that the
// scripted fake server and the fuzz tests send. A user of the wire format
// has package proto, which validates what it encodes.
//
// It imports the standard library only, so proto builds on it (AppendSize)
// without depending on anything else.
package wire
