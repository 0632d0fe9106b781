package fuzz

import (
	"fmt"
	"strings"
)

// infoSeeds seed FuzzAsyncInfo: INFO bodies as servers send them after the
// handshake (gossip, lame duck, a new nonce), and broken ones.
var infoSeeds = func() []seed {
	base := `"server_id":"NCF3FC2RAUZBW3OGISZUOFUSWDWASODAG5ROF7IBAILPMUYYFQVFCUWP","server_name":"n1","version":"2.15.2","proto":1,"go":"go1.26.8","host":"0.0.0.0","port":4222,"headers":true`
	info := func(name, rest string) seed {
		return seed{name, []any{[]byte("{" + base + rest + "}")}}
	}
	var urls100 []string
	for i := range 100 {
		urls100 = append(urls100, fmt.Sprintf(`"10.0.%d.%d:4222"`, i/250, i%250+1))
	}
	return []seed{
		info("plain", `,"max_payload":1048576`),
		info("cluster-urls", `,"max_payload":1048576,"cluster":"c1","connect_urls":["127.0.0.1:37433","127.0.0.1:41803"]`),
		info("ipv6-and-names", `,"max_payload":1048576,"connect_urls":["[::1]:4222","[fd00::3]:4223","h2.example:4224"]`),
		info("malformed-urls", `,"max_payload":1048576,"connect_urls":["bad",":4222","host:","a:b:c","","nats://h6.example:4222","h:99999","h:-1"]`),
		info("duplicate-urls", `,"max_payload":1048576,"connect_urls":["10.0.0.1:4222","10.0.0.1:4222","10.0.0.1:4222"]`),
		info("hundred-urls", `,"max_payload":1048576,"connect_urls":[`+strings.Join(urls100, ",")+`]`),
		info("urls-removed", `,"max_payload":1048576,"connect_urls":[]`),
		info("ws-urls", `,"max_payload":1048576,"ws_connect_urls":["127.0.0.1:8080"]`),
		info("ldm", `,"max_payload":1048576,"connect_urls":["10.0.0.1:4222","10.0.0.2:4222"],"ldm":true`),
		info("ldm-alone", `,"max_payload":1048576,"ldm":true`),
		info("new-nonce", `,"max_payload":1048576,"auth_required":true,"nonce":"AbCdEfGhIjKlMnO"`),
		info("max-payload-64MiB", `,"max_payload":67108864`),
		info("max-payload-over", `,"max_payload":67108865`),
		info("max-payload-zero", `,"max_payload":0`),
		info("max-payload-negative", `,"max_payload":-1`),
		info("max-payload-string", `,"max_payload":"1048576"`),
		info("max-payload-float", `,"max_payload":1048576.5`),
		info("max-payload-huge", `,"max_payload":99999999999999999999999`),
		info("no-max-payload", ``),
		info("wrong-type-headers", `,"max_payload":1048576,"headers":"yes"`),
		info("wrong-type-urls", `,"max_payload":1048576,"connect_urls":"10.0.0.1:4222"`),
		info("unknown-fields", `,"max_payload":1048576,"future":{"a":[1,2,{"b":null}]},"xkey":"XDILME3FFSLSAFR34AYCYIF4ZTBTSU2EZUCU6W4ONODZTLNXKEVB2QZN"`),
		info("tls-required", `,"max_payload":1048576,"tls_required":true`),
		info("unicode", `,"max_payload":1048576,"server_name":"n\u00e9\u2603","cluster":"\ud83d\ude00"`),
		info("duplicate-key", `,"max_payload":0,"max_payload":1048576`),
		{"empty", []any{[]byte("")}},
		{"empty-object", []any{[]byte("{}")}},
		{"null", []any{[]byte("null")}},
		{"array", []any{[]byte(`[{"max_payload":1048576}]`)}},
		{"truncated", []any{[]byte(`{"max_payload":1048576,"connect_urls":["10.0.0.1:42`)}},
		{"trailing-garbage", []any{[]byte(`{"max_payload":1048576} x`)}},
		{"spaces", []any{[]byte(`   {"max_payload":1048576}   `)}},
	}
}()

// statusSeeds seed FuzzStatusReply: header blocks and payloads of replies.
var statusSeeds = []seed{
	st("no-responders", "NATS/1.0 503\r\n\r\n", ""),
	st("no-responders-subject", "NATS/1.0 503\r\nNats-Subject: nobody.here\r\n\r\n", ""),
	st("503-with-payload", "NATS/1.0 503\r\n\r\n", "body"),
	st("503-description", "NATS/1.0 503 No Responders\r\n\r\n", ""),
	st("503-spaces", "NATS/1.0    503   \r\n\r\n", ""),
	st("no-messages", "NATS/1.0 404 No Messages\r\n\r\n", ""),
	st("request-timeout", "NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 5\r\nNats-Pending-Bytes: 0\r\n\r\n", ""),
	st("consumer-deleted", "NATS/1.0 409 Consumer Deleted\r\n\r\n", ""),
	st("batch-exceeded", "NATS/1.0 409 Exceeded MaxRequestBatch of 1\r\n\r\n", ""),
	st("leadership", "NATS/1.0 409 Leadership Change\r\n\r\n", ""),
	st("heartbeat", "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 42\r\nNats-Last-Stream: 1042\r\n\r\n", ""),
	st("flow-control", "NATS/1.0 100 FlowControl Request\r\n\r\n", ""),
	st("bad-request", "NATS/1.0 400 Bad Request\r\n\r\n", ""),
	st("headers-only", "NATS/1.0\r\nX-Id: 7\r\nNats-Msg-Id: abc\r\n\r\n", "hello"),
	st("empty-block", "NATS/1.0\r\n\r\n", "data"),
	st("status-200", "NATS/1.0 200\r\n\r\n", "ok"),
	st("code-000", "NATS/1.0 000\r\n\r\n", ""),
	st("code-999", "NATS/1.0 999 whatever\r\n\r\n", ""),
	st("bad-two-digits", "NATS/1.0 50\r\n\r\n", ""),
	st("bad-four-digits", "NATS/1.0 5034\r\n\r\n", ""),
	st("bad-sign", "NATS/1.0 +03\r\n\r\n", ""),
	st("bad-letters", "NATS/1.0 abc\r\n\r\n", ""),
	st("bad-tab", "NATS/1.0\t503\r\n\r\n", ""),
	st("bad-version", "NATS/2.0 503\r\n\r\n", ""),
	st("bad-magic", "XATS/1.0\r\n\r\n", "bad"),
	st("bad-key", "NATS/1.0\r\nBad Key: v\r\n\r\n", ""),
	st("bad-no-colon", "NATS/1.0\r\nNoColon\r\n\r\n", ""),
	st("bad-bare-lf", "NATS/1.0 503\nX: y\r\n\r\n", ""),
	st("bad-trailing-space", "NATS/1.0 \r\n\r\n", ""),
	st("503-then-fields", "NATS/1.0 503\r\nA: 1\r\nB: 2\r\n\r\n", ""),
}

func st(name, block, payload string) seed {
	return seed{name, []any{[]byte(block), []byte(payload)}}
}
