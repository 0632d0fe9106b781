package jsapi

import "testing"

func BenchmarkParseAckSubject(b *testing.B) {
	s := "$JS.ACK.ORDERS.worker.1.123456.123450.1764440000000000000.4711"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseAckSubject(s); err != nil {
			b.Fatal(err)
		}
	}
}
