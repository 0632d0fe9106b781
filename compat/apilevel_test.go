package compat

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// apiInfoReply is $JS.API.INFO's reply, or its error.
type apiInfoReply struct {
	Error *jsapi.APIError `json:"error"`
	API   struct {
		Level int `json:"level"`
	} `json:"api"`
}

// requireLevel sends $JS.API.INFO with Nats-Required-Api-Level: level,
// as natsio does for requests whose body uses level-gated fields, and
// returns the server's error reply (nil when it answered normally).
func requireLevel(t *testing.T, s *server, level int) error {
	t.Helper()
	nc := connect(t, s)
	h := proto.NewHeader(jsapi.HeaderRequiredAPILevel, strconv.Itoa(level))
	m, err := nc.RequestMsg(testCtx(t), "$JS.API.INFO", h, nil)
	if err != nil {
		t.Fatal(err)
	}
	var r apiInfoReply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		t.Fatalf("reply %q: %v", m.Data, err)
	}
	if r.Error != nil {
		return r.Error
	}
	return nil
}

// runAPILevel checks ADR-44 against the server: the level it reports and
// what it does with Nats-Required-Api-Level.
func runAPILevel(t *testing.T, v version, s *server) {
	t.Run("required-level-above", func(t *testing.T) {
		const row = "Nats-Required-Api-Level above the server's level"
		err := requireLevel(t, s, v.apiLevel()+1)
		if !v.has(12) {
			// 2.10 and 2.11 do not know the header: natsio's check before
			// sending is what protects a feature there.
			record(t, v, row, cellIgnored)
			if err != nil {
				t.Fatalf("got %v, want the header ignored", err)
			}
			return
		}
		record(t, v, row, cellRejected)
		var ae *jsapi.APIError
		if !errors.As(err, &ae) || ae.Code != 412 || ae.ErrorCode != 10185 {
			t.Fatalf("got %v, want 412 / 10185", err)
		}
		if !errors.Is(err, jsapi.ErrRequiredAPILevel) || !errors.Is(err, jsapi.ErrServerTooOld) {
			t.Fatalf("%v does not match ErrRequiredAPILevel and ErrServerTooOld", err)
		}
	})
	t.Run("required-level-met", func(t *testing.T) {
		record(t, v, "Nats-Required-Api-Level at the server's level", cellWorks)
		if err := requireLevel(t, s, v.apiLevel()); err != nil {
			t.Fatalf("level %d: %v", v.apiLevel(), err)
		}
	})
	t.Run("reported-level", func(t *testing.T) {
		js := newJS(t, s)
		info := js.Conn().ServerInfo().APILevel
		ai, err := js.AccountInfo(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		lvl, err := js.APILevel(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		wantInfo := v.apiLevel()
		if !v.has(12) {
			wantInfo = 0 // not in INFO before 2.12
		}
		if info != wantInfo || ai.API.Level != v.apiLevel() || lvl != v.apiLevel() {
			t.Fatalf("INFO api_lvl %d, $JS.API.INFO level %d, APILevel %d; want %d, %d, %d", info, ai.API.Level, lvl, wantInfo, v.apiLevel(), v.apiLevel())
		}
		cell := "— / " + strconv.Itoa(ai.API.Level)
		if info != 0 {
			cell = fmt.Sprintf("%d / %d", info, ai.API.Level)
		}
		record(t, v, "server's API level (INFO api_lvl / $JS.API.INFO)", cell)
	})
}
