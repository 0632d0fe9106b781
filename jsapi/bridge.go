package jsapi

import (
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/jshook"
)

// The machinery natsio's own layers use through internal/jsx.
func init() {
	jshook.NewSlab = func(nc *conn.Conn, hint int, lazy bool) (alloc func() *conn.Msg, shell func(*conn.Msg) *conn.Msg) {
		s := newMsgSlab(nc, hint, lazy)
		return s.alloc, s.shell
	}
	jshook.FromSlab = fromSlab
	jshook.NewMsg = newMsg
	jshook.ReuseAckReply = reuseAckReply
	jshook.ApplyPubOpts = applyPubOptHeaders
	jshook.ParsePubAck = parsePubAck
}
