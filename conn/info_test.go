package conn

import "testing"

// The JetStream API level read from an INFO: api_lvl when the server
// sends it (2.12+), else from the version.
func TestJetStreamLevel(t *testing.T) {
	for _, c := range []struct {
		si   ServerInfo
		want int32
	}{
		{ServerInfo{Version: "2.10.29", JetStream: true}, 0},
		{ServerInfo{Version: "2.11.17", JetStream: true}, 1},
		{ServerInfo{Version: "2.11.0-RC.1", JetStream: true}, 1},
		{ServerInfo{Version: "2.12.15", JetStream: true, APILevel: 3}, 3},
		{ServerInfo{Version: "2.15.3", JetStream: true, APILevel: 5}, 5},
		{ServerInfo{Version: "3.0.0", JetStream: true}, 1},
		{ServerInfo{Version: "2.9.25", JetStream: true}, 0},
		{ServerInfo{Version: "v2.11.1", JetStream: true}, 1},
		{ServerInfo{Version: "weird", JetStream: true}, levelUnknown},
		{ServerInfo{Version: "", JetStream: true}, levelUnknown},
		{ServerInfo{Version: "2.15.3", APILevel: 5}, levelNoJetStream},
	} {
		if got := jetStreamLevel(&c.si); got != c.want {
			t.Errorf("%+v: level %d, want %d", c.si, got, c.want)
		}
	}
}
