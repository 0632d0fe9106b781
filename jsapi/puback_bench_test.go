package jsapi

import "testing"

func BenchmarkParsePubAck(b *testing.B) {
	body := []byte(`{"stream":"BENCH_jspub_async_mem_128","seq":123456789}`)
	var ack PubAck
	b.ReportAllocs()
	for b.Loop() {
		if err := parsePubAck(body, &ack); err != nil {
			b.Fatal(err)
		}
	}
}
