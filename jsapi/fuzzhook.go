package jsapi

import (
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fuzzhook"
)

func init() {
	fuzzhook.DirectGet = func(m *conn.Msg) (fuzzhook.Stored, error) {
		sm, err := parseDirectGet(m)
		if err != nil {
			return fuzzhook.Stored{}, err
		}
		return fuzzhook.Stored{Subject: sm.Subject, Sequence: sm.Sequence, Time: sm.Time, Header: sm.Header, Data: sm.Data}, nil
	}
}
