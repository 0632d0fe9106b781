package proto_test

import (
	"errors"
	"fmt"

	"github.com/natsio/natsio/proto"
)

// A message split across two reads: the parser holds the partial frame and
// delivers it, copied once into memory the caller owns, when the rest
// arrives.
func ExampleParser() {
	var p proto.Parser
	for _, chunk := range []string{
		"INFO {\"max_payload\":1048576}\r\nMSG greet.joe 1 _INBOX.7 5\r\nhel",
		"lo\r\nPING\r\n",
	} {
		p.Feed([]byte(chunk))
		for {
			op, err := p.Next()
			if err != nil {
				fmt.Println("protocol error, drop the connection:", err)
				return
			}
			if op == nil {
				break // chunk consumed; read more
			}
			switch op.Kind {
			case proto.KindInfo:
				fmt.Printf("INFO %s\n", op.Text)
			case proto.KindMsg:
				fmt.Printf("MSG %s sid=%d reply=%s payload=%q owned=%v\n",
					op.Subject, op.SID, op.Reply, op.Payload, op.Owned)
			default:
				fmt.Println(op.Kind)
			}
		}
	}
	// Output:
	// INFO {"max_payload":1048576}
	// MSG greet.joe sid=1 reply=_INBOX.7 payload="hello" owned=true
	// PING
}

func ExampleParser_error() {
	var p proto.Parser
	p.Limits.MaxPayload = 1 << 20
	p.Feed([]byte("MSG foo 1 2097152\r\n"))
	_, err := p.Next()
	fmt.Println(errors.Is(err, proto.ErrPayloadTooLarge))
	fmt.Println(err)
	// Output:
	// true
	// proto: payload size exceeds limit at byte 19 near "foo 1 2097152"
}

func ExampleAppendPub() {
	buf := make([]byte, 0, 512)
	buf, err := proto.AppendPub(buf, "greet.joe", "_INBOX.7", []byte("hello"))
	fmt.Printf("%q %v\n", buf, err)

	// Invalid arguments are refused before anything is written.
	buf, err = proto.AppendPub(buf, "greet.*", "", []byte("hello"))
	fmt.Printf("%q %v\n", buf, errors.Is(err, proto.ErrBadSubject))
	// Output:
	// "PUB greet.joe _INBOX.7 5\r\nhello\r\n" <nil>
	// "PUB greet.joe _INBOX.7 5\r\nhello\r\n" true
}

func ExampleAppendHPub() {
	// A Header reused across publishes allocates nothing once grown.
	var h proto.Header
	h.Reset()
	h.Add("Nats-Msg-Id", "order-1")
	h.Add("Nats-TTL", "5s")
	buf, err := proto.AppendHPub(nil, "orders.new", "", &h, []byte("{}"))
	fmt.Printf("%q %v\n", buf, err)
	// Output:
	// "HPUB orders.new 48 50\r\nNATS/1.0\r\nNats-Msg-Id: order-1\r\nNats-TTL: 5s\r\n\r\n{}\r\n" <nil>
}

func ExampleHeaderFromBlock() {
	// A received block, as a message delivers it: read in place.
	h := proto.HeaderFromBlock([]byte("NATS/1.0 100 Idle Heartbeat\r\n" +
		"Nats-Last-Consumer: 5\r\n" +
		"Nats-Last-Stream: 9\r\n\r\n"))
	code, desc := h.Status()
	fmt.Printf("status %d %q\n", code, desc)
	v, ok := h.Lookup("Nats-Last-Stream")
	fmt.Printf("%s %v\n", v, ok)
	_, ok = h.Lookup("nats-last-stream") // keys match byte for byte
	fmt.Println(ok)
	// Output:
	// status 100 "Idle Heartbeat"
	// 9 true
	// false
}

func ExampleHeaderOf() {
	// Keys are taken in sorted order: the same map gives the same block.
	h := proto.HeaderOf(map[string][]string{
		"X-Tag":       {"a", "b"},
		"Nats-Msg-Id": {"order-1"},
	})
	for k, v := range h.All() {
		fmt.Printf("%s: %s\n", k, v)
	}
	// Output:
	// Nats-Msg-Id: order-1
	// X-Tag: a
	// X-Tag: b
}
