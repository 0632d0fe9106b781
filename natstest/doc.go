// Package natstest runs real NATS servers inside a Go test, benchmark,
// fuzz target, TestMain or Example, so that code using natsio is tested
// against the server it will meet in production: an embedded nats-server
// (github.com/nats-io/nats-server/v2), not a mock.
//
// # Servers
//
// NewServer starts a server on a free loopback port with JetStream on and
// its store in a temporary directory, and stops it when the test ends:
//
//	func TestOrders(t *testing.T) {
//		s := natstest.NewServer(t)
//		nc := s.Connect(t) // closed when the test ends
//		if err := nc.Publish("orders.new", []byte("o-1")); err != nil {
//			t.Fatal(err)
//		}
//	}
//
// Options choose what the server is like: JetStream(false), MemoryStore,
// MaxPayload, UserPassword, Token, NKeyUsers, Accounts, OperatorMode (with
// NewOperator minting accounts and user creds), TLS and MutualTLS (with
// certificates generated for the test), WebSocket, LeafNodes and NewLeaf
// (a second server connected as a leaf node, with its own JetStream
// domain), and NoListener (no socket at all). Server.Connect logs in with
// whatever the server requires.
//
// Server.Restart brings a server back on the same ports with the same
// store, Server.Shutdown takes it away until then, and Server.LameDuck
// sends it into lame duck mode: the faults of a server. NewCluster starts
// a routed JetStream cluster whose nodes and stream leaders can be killed
// and restarted. NewProxy puts a fault proxy between clients and a server:
// cuts, stalls, throttling, refused connections and corrupted bytes.
//
// NewProcess runs a server in a child process instead (the test binary
// started again, with RunIfChild in TestMain taking over), so that a
// benchmark's allocation and CPU figures count the code under test alone.
//
// # In-process connections
//
// Server.InProcess is a conn.Option that connects through nats-server's
// in-process pipe instead of a socket, so an application's unit tests open
// no port and pay no loopback round trip; with NoListener the server opens
// none either. Server.ConnectInProcess connects that way in a test.
//
// # Lifetimes and failures
//
// The constructors that take a testing.TB (NewServer, NewCluster, NewLeaf,
// NewProxy, GenerateCerts, Server.Connect) end the test with tb.Fatalf when
// they fail, so call them from the test's goroutine, and register their
// own clean-up with tb.Cleanup: servers, connections and proxies are
// closed and temporary directories removed when the test ends, in the
// reverse order of creation. Their counterparts without one (Start,
// StartCluster, StartLeaf, StartProxy) return an error and leave the
// clean-up to the caller's Close (NewCerts writes into the caller's
// directory): use them in TestMain, in Example functions and in programs:
//
//	var serverURL string
//
//	func TestMain(m *testing.M) {
//		s, err := natstest.Start()
//		if err != nil {
//			log.Fatal(err)
//		}
//		serverURL = s.URL()
//		code := m.Run()
//		s.Close() // os.Exit runs no deferred calls
//		os.Exit(code)
//	}
//
// Methods that wait (Restart, Cluster.WaitReady, Cluster.WaitStreamLeader)
// return an error after a bounded time rather than hang. Helpers that make
// keys (NewNKeyUser, NewOperator, Operator.AddAccount,
// OperatorAccount.NewUser) panic only if the system's random source fails.
//
// Server logs are discarded unless the environment variable
// NATSIO_TEST_SERVER_LOG (LogEnv) is set. The servers embed a complete
// nats-server: import this package from tests and test helpers only.
package natstest
