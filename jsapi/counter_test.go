package jsapi_test

import (
	"errors"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// TestCounterBigTotals: increments beyond int64 (IncrBig), negative ones,
// the ack's Total, the stored total read back with Stream.Counter, and a
// counter stream that sources another one: its stored total carries
// Nats-Counter-Sources, read with CounterSources. A bad increment is
// refused before anything is sent.
func TestCounterBigTotals(t *testing.T) {
	js, nc, ctx := pubEnv(t, `,"allow_msg_counter":true`)
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	if _, err := js.Publish(ctx, "p.hits", nil, jsapi.IncrBig(huge)); err != nil {
		t.Fatal(err)
	}
	ack, err := js.Publish(ctx, "p.hits", nil, jsapi.IncrBig(huge))
	if err != nil {
		t.Fatal(err)
	}
	want := new(big.Int).Lsh(huge, 1)
	if got, err := ack.Total(); err != nil || got.Cmp(want) != 0 {
		t.Fatalf("ack total %v %v, want %v", got, err, want)
	}
	if ack, err = js.Publish(ctx, "p.hits", nil, jsapi.Incr(-7)); err != nil {
		t.Fatal(err)
	}
	want.Sub(want, big.NewInt(7))
	if got, err := ack.Total(); err != nil || got.Cmp(want) != 0 {
		t.Fatalf("total after a negative increment %v %v, want %v", got, err, want)
	}
	st, err := js.Stream(ctx, "P")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.Counter(ctx, "p.hits"); err != nil || got.Cmp(want) != 0 {
		t.Fatalf("stored total %v %v, want %v", got, err, want)
	}
	if _, err := st.Counter(ctx, "p.never"); !errors.Is(err, jsapi.ErrMsgNotFound) {
		t.Fatalf("counter never incremented: %v", err)
	}

	out := nc.Stats().OutMsgs
	for _, o := range []jsapi.PubOpt{jsapi.IncrBig(nil)} {
		if _, err := js.Publish(ctx, "p.hits", nil, o); !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("bad increment: %v", err)
		}
	}
	if nc.Stats().OutMsgs != out {
		t.Fatal("a bad increment was sent")
	}

	// AGG sources P: its total for p.hits is P's, with the parts named.
	agg, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "AGG", Storage: jsapi.StorageMemory,
		AllowMsgCounter: true, Sources: []jsapi.StreamSource{{Name: "P"}}})
	if err != nil {
		t.Fatal(err)
	}
	// Sourcing replays P's increments one by one: an early read may see an
	// intermediate total. Wait for the last one.
	var m *jsapi.StoredMsg
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, err = agg.GetLastMsgForSubject(ctx, "p.hits")
		if err == nil {
			got, terr := jsapi.CounterTotal(m.Data)
			if terr != nil {
				t.Fatalf("sourced total: %v", terr)
			}
			if got.Cmp(want) == 0 {
				break
			}
			err = fmt.Errorf("sourced total %v, want %v", got, want)
		}
		if time.Now().After(deadline) {
			t.Fatalf("AGG never got P's total: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	src, err := jsapi.CounterSources(m)
	if err != nil || src["P"]["p.hits"] == nil || src["P"]["p.hits"].Cmp(want) != 0 {
		t.Fatalf("counter sources %v %v (header %q)", src, err, m.Header)
	}
}

// TestCounterParsing: totals and source headers that are not what a
// counter stream writes are ErrBadCounter, not a zero.
func TestCounterParsing(t *testing.T) {
	for _, body := range []string{``, `{}`, `{"val":""}`, `{"val":"1.5"}`, `{"val":12}`, `{"val":"--1"}`, `not json`} {
		if v, err := jsapi.CounterTotal([]byte(body)); !errors.Is(err, jsapi.ErrBadCounter) {
			t.Errorf("CounterTotal(%q) = %v, %v", body, v, err)
		}
	}
	if v, err := jsapi.CounterTotal([]byte(`{"val":"-42"}`)); err != nil || v.Int64() != -42 {
		t.Fatalf("CounterTotal(-42) = %v, %v", v, err)
	}
	bad := &jsapi.StoredMsg{Header: proto.HeaderFromBlock([]byte("NATS/1.0\r\nNats-Counter-Sources: {\"S\":{\"a\":\"x\"}}\r\n\r\n"))}
	if _, err := jsapi.CounterSources(bad); !errors.Is(err, jsapi.ErrBadCounter) {
		t.Fatalf("bad sources header: %v", err)
	}
	if src, err := jsapi.CounterSources(&jsapi.StoredMsg{}); src != nil || err != nil {
		t.Fatalf("no header: %v %v", src, err)
	}
	if _, err := (&jsapi.PubAck{}).Total(); !errors.Is(err, jsapi.ErrBadCounter) {
		t.Fatalf("ack without a total: %v", err)
	}
}
