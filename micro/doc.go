// Package micro builds NATS services as described by ADR-32 (the "Service
// API"): request handlers grouped into a named, versioned service that
// tools can discover and monitor over $SRV subjects, compatible with the
// other NATS clients and the nats CLI ("nats micro ls").
//
// # Services and endpoints
//
//	svc, err := micro.AddService(nc, micro.Config{Name: "orders", Version: "1.0.0"})
//	if err != nil {
//		return err // *ConfigError: nothing was sent
//	}
//	defer svc.Stop(ctx)
//	v1 := svc.AddGroup("orders.v1")
//	err = v1.AddEndpoint("create", micro.HandlerFunc(func(r micro.Request) {
//		if len(r.Data()) == 0 {
//			r.Error("400", "empty order", nil) // Nats-Service-Error(-Code) headers
//			return
//		}
//		r.RespondJSON(map[string]string{"id": "o-1"})
//	}))                                         // listens on orders.v1.create, queue group "q"
//
// A service's name (A-Z, a-z, 0-9, '-', '_') and semantic version are
// checked before anything is sent, as are endpoint names, subjects and
// queue groups: a failure is a *ConfigError matching ErrInvalidName,
// ErrInvalidVersion, ErrInvalidSubject, ErrInvalidQueueGroup or
// ErrInvalidConfig. Each instance gets a unique id (a NUID).
//
// Endpoints join the queue group "q" by default, so instances of a service
// share the load; Config.QueueGroup, GroupQueueGroup and
// EndpointQueueGroup change it, and the NoQueueGroup variants make plain
// subscriptions that every instance receives.
//
// # Goroutines and lifetimes
//
// An endpoint is a conn.SubscribeFunc subscription: its handler runs on
// the subscription's goroutine, one request at a time, and may keep the
// Request and answer later from elsewhere. PING and INFO are answered on
// the connection's reading goroutine from responses encoded in advance
// (re-encoded when an endpoint is added); STATS on a goroutine of its own,
// since it calls Config.StatsHandler. One goroutine per service notices
// the connection closing.
//
// A service runs until Stop or until its connection closes (Close,
// Drain, or a fatal error: then ErrHandler receives that error). Either
// way it stops once, and DoneHandler is called once, after every handler
// call has returned (Done is closed just before). Stop drains the
// subscriptions: requests already on their way are still handled, and
// Stop waits for them unless a handler call is still running (a handler
// may call Stop), in which case Done tells when the last one returns.
//
// # Statistics
//
// Per endpoint: requests (counted before the handler runs), errors
// (Request.Error, responses carrying the error headers, responses that
// could not be sent), the last error, and the time spent in the handler
// (added when it returns) with its average. Service.Stats and STATS
// requests report them, with StatsHandler's "data"; Service.Reset zeroes
// them.
//
// # Discovery
//
// Every service subscribes, without queue group, to $SRV.PING, $SRV.INFO
// and $SRV.STATS, each alone, followed by .<name>, and by .<name>.<id>,
// and answers with the JSON of ADR-32 (types io.nats.micro.v1.ping_response,
// info_response and stats_response). Ping, Infos and StatsOf gather those
// answers on the client side with conn.RequestMany, until their stall or
// ctx's deadline, whatever keeps arriving, and keep a bounded number of
// replies and bytes (DiscoverLimits); ResponseError reads
// the service error out of a reply. The $SRV prefix is overridable, as
// ADR-32 asks: Config.Prefix for a service, DiscoverPrefix for the
// clients (also to reach another account's services through an import).
package micro
