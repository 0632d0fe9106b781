package testserver

import "github.com/natsio/natsio/natstest"

// ForExample starts an embedded server on a free loopback port for a
// runnable Example function, which has no *testing.T (natstest.Start): it
// panics when the server cannot start. With jetStream, JetStream runs on a
// fresh store directory. stop shuts the server down, waits for it, and
// removes the store.
func ForExample(jetStream bool) (url string, stop func()) {
	s, err := natstest.Start(natstest.JetStream(jetStream))
	if err != nil {
		panic(err)
	}
	return s.URL(), s.Close
}
