package conn_test

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// By default a TCP connection is wrapped for raw socket I/O on Linux;
// StdSocketIO keeps net.TCPConn's own calls. Both carry messages, requests
// and responses alike.
func TestStdSocketIOOption(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	for _, tc := range []struct {
		name string
		opts []conn.Option
		fast bool
	}{
		{"default", nil, runtime.GOOS == "linux"},
		{"StdSocketIO", []conn.Option{conn.StdSocketIO()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			nc, err := conn.Connect(ctx, s.URL(), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			c := conn.SocketConn(nc)
			if got := conn.IsFastConn(c); got != tc.fast {
				t.Fatalf("raw socket I/O = %v, want %v (%T)", got, tc.fast, c)
			}
			if !tc.fast {
				if _, ok := c.(*net.TCPConn); !ok {
					t.Fatalf("socket is %T, want *net.TCPConn", c)
				}
			}
			svc, err := nc.SubscribeFunc("svc", func(m *conn.Msg) { _ = m.Respond(append([]byte("re:"), m.Data...)) })
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Unsubscribe()
			sub, err := nc.Subscribe("feed")
			if err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			for i := range 100 {
				m, err := nc.Request(ctx, "svc", []byte{byte(i)})
				if err != nil || string(m.Data) != "re:"+string([]byte{byte(i)}) {
					t.Fatalf("request %d: %v %q", i, err, m.Data)
				}
				if err := nc.Publish("feed", []byte{byte(i)}); err != nil {
					t.Fatal(err)
				}
				got, err := sub.NextMsg(ctx)
				if err != nil || len(got.Data) != 1 || got.Data[0] != byte(i) {
					t.Fatalf("message %d: %v %v", i, err, got)
				}
			}
		})
	}
}
