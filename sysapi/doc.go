// Package sysapi reads the NATS server's monitoring API through the system
// account: the $SYS.REQ.SERVER subjects every server answers, with the same
// data as the HTTP monitoring endpoints (/varz, /connz, /routez, /gatewayz,
// /leafz, /subsz, /jsz, /accountz, /healthz) plus STATSZ, without an HTTP
// port.
//
// A *Client is a stateless view of a connection logged into the system
// account (or, for CONNZ only, any account: the server then limits the
// answer to that account). Each kind has two calls: one asks one server by
// its ID ($SYS.REQ.SERVER.<id>.<KIND>), the Ping form asks every server
// ($SYS.REQ.SERVER.PING.<KIND>) and gathers the replies:
//
//	sc, err := sysapi.New(nc)
//	one, err := sc.Varz(ctx, nc.ServerInfo().ServerID, sysapi.VarzOptions{})
//	all, err := sc.PingVarz(ctx, sysapi.VarzOptions{}, sysapi.Expect(3))
//	for _, r := range all {
//		fmt.Println(r.Server.Name, r.Data.Connections)
//	}
//
// # Replies
//
// Each reply is a *Reply: the answering server, the typed data, and Raw,
// the reply exactly as the server sent it. The typed structs hold the
// fields a program usually needs; every other field, including those of
// server versions newer than this package, is in Raw.
//
// # Gathering replies from all servers
//
// A Ping call publishes one request and collects replies until, whichever
// comes first: Expect's count is reached; Stall passes without a new reply
// (default 500 ms, not used with Expect); the total timeout passes (ctx's
// deadline, else the Client's Timeout, default 5 s); MaxReplies replies
// (default 1024) have arrived. At most MaxBytes of replies (default 64 MiB)
// are kept: the reply that would pass it ends the gathering with
// ErrReplyLimit, returned with the replies kept. With Expect, fewer replies
// by the timeout is ErrIncomplete, also returned with the replies.
//
// # Errors
//
//   - ErrNoSystemAccount: nobody answered. The connection is not in the
//     system account (the server's "no responders"), may not publish to
//     $SYS.REQ (a permissions violation, which the server reports to the
//     connection only: the request then times out), or no server answered
//     in time. The error also matches the cause: conn.ErrNoResponders, or
//     conn.ErrTimeout and context.DeadlineExceeded.
//   - ErrUnknownServer: a request to one server whose ID no server has.
//   - *APIError: the server refused the request (a bad option, say).
//   - ErrIncomplete, ErrReplyLimit: see above.
//   - A reply that is not the server's JSON is an error naming the kind
//     and the server's subject; with Ping it ends the gathering.
//
// Every call ends by its context, the Client's Timeout or the connection's
// Close.
package sysapi
