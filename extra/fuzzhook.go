package extra

import (
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/directget"
	"github.com/natsio/natsio/internal/fuzzhook"
	"github.com/natsio/natsio/jsapi"
)

func init() {
	fuzzhook.BatchGet = func(m *conn.Msg) (fuzzhook.Stored, error) {
		var sm jsapi.StoredMsg
		var r directget.Reply
		r.Parse(m.Header.Block())
		pending, err := parseStored(m, &r, &sm)
		if err != nil {
			return fuzzhook.Stored{}, err
		}
		return fuzzhook.Stored{Subject: sm.Subject, Sequence: sm.Sequence, Time: sm.Time, Header: sm.Header, Data: sm.Data,
			NumPending: sm.NumPending, LastSequence: sm.LastSequence, HasPending: pending}, nil
	}
}
