package sysapi

import (
	"context"
	"encoding/json"
)

// Varz asks the server with ID id for the server's general state and configuration (VARZ). It fails with
// ErrUnknownServer when no server has that ID, ErrNoSystemAccount when no
// server answers, or the server's *APIError.
func (c *Client) Varz(ctx context.Context, id string, o VarzOptions) (*Reply[Varz], error) {
	return one[Varz](ctx, c, KindVarz, id, o)
}

// PingVarz asks every server (or those o.Filter selects) for the server's general state and configuration
// (VARZ) and gathers the replies as the package documentation describes.
func (c *Client) PingVarz(ctx context.Context, o VarzOptions, opts ...PingOpt) ([]*Reply[Varz], error) {
	return all[Varz](ctx, c, KindVarz, Subject(KindVarz, ""), o, opts)
}

// Connz asks the server with ID id for the server's connections (CONNZ). It fails with
// ErrUnknownServer when no server has that ID, ErrNoSystemAccount when no
// server answers, or the server's *APIError.
func (c *Client) Connz(ctx context.Context, id string, o ConnzOptions) (*Reply[Connz], error) {
	return one[Connz](ctx, c, KindConnz, id, o)
}

// PingConnz asks every server (or those o.Filter selects) for the server's connections
// (CONNZ) and gathers the replies as the package documentation describes.
func (c *Client) PingConnz(ctx context.Context, o ConnzOptions, opts ...PingOpt) ([]*Reply[Connz], error) {
	return all[Connz](ctx, c, KindConnz, Subject(KindConnz, ""), o, opts)
}

// Routez asks the server with ID id for the server's routes (ROUTEZ). It fails with
// ErrUnknownServer when no server has that ID, ErrNoSystemAccount when no
// server answers, or the server's *APIError.
func (c *Client) Routez(ctx context.Context, id string, o RoutezOptions) (*Reply[Routez], error) {
	return one[Routez](ctx, c, KindRoutez, id, o)
}

// PingRoutez asks every server (or those o.Filter selects) for the server's routes
// (ROUTEZ) and gathers the replies as the package documentation describes.
func (c *Client) PingRoutez(ctx context.Context, o RoutezOptions, opts ...PingOpt) ([]*Reply[Routez], error) {
	return all[Routez](ctx, c, KindRoutez, Subject(KindRoutez, ""), o, opts)
}

// Gatewayz asks the server with ID id for the server's gateways (GATEWAYZ). It fails with
// ErrUnknownServer when no server has that ID, ErrNoSystemAccount when no
// server answers, or the server's *APIError.
func (c *Client) Gatewayz(ctx context.Context, id string, o GatewayzOptions) (*Reply[Gatewayz], error) {
	return one[Gatewayz](ctx, c, KindGatewayz, id, o)
}

// PingGatewayz asks every server (or those o.Filter selects) for the server's gateways
// (GATEWAYZ) and gathers the replies as the package documentation describes.
func (c *Client) PingGatewayz(ctx context.Context, o GatewayzOptions, opts ...PingOpt) ([]*Reply[Gatewayz], error) {
	return all[Gatewayz](ctx, c, KindGatewayz, Subject(KindGatewayz, ""), o, opts)
}

// Leafz asks the server with ID id for the server's leaf node connections (LEAFZ). It fails with
// ErrUnknownServer when no server has that ID, ErrNoSystemAccount when no
// server answers, or the server's *APIError.
func (c *Client) Leafz(ctx context.Context, id string, o LeafzOptions) (*Reply[Leafz], error) {
	return one[Leafz](ctx, c, KindLeafz, id, o)
}

// PingLeafz asks every server (or those o.Filter selects) for the server's leaf node connections
// (LEAFZ) and gathers the replies as the package documentation describes.
func (c *Client) PingLeafz(ctx context.Context, o LeafzOptions, opts ...PingOpt) ([]*Reply[Leafz], error) {
	return all[Leafz](ctx, c, KindLeafz, Subject(KindLeafz, ""), o, opts)
}

// Subsz asks the server with ID id for the server's subscription table (SUBSZ). It fails with
// ErrUnknownServer when no server has that ID, ErrNoSystemAccount when no
// server answers, or the server's *APIError.
func (c *Client) Subsz(ctx context.Context, id string, o SubszOptions) (*Reply[Subsz], error) {
	return one[Subsz](ctx, c, KindSubsz, id, o)
}

// PingSubsz asks every server (or those o.Filter selects) for the server's subscription table
// (SUBSZ) and gathers the replies as the package documentation describes.
func (c *Client) PingSubsz(ctx context.Context, o SubszOptions, opts ...PingOpt) ([]*Reply[Subsz], error) {
	return all[Subsz](ctx, c, KindSubsz, Subject(KindSubsz, ""), o, opts)
}

// Jsz asks the server with ID id for the server's JetStream state (JSZ). It fails with
// ErrUnknownServer when no server has that ID, ErrNoSystemAccount when no
// server answers, or the server's *APIError.
func (c *Client) Jsz(ctx context.Context, id string, o JszOptions) (*Reply[Jsz], error) {
	return one[Jsz](ctx, c, KindJsz, id, o)
}

// PingJsz asks every server (or those o.Filter selects) for the server's JetStream state
// (JSZ) and gathers the replies as the package documentation describes.
func (c *Client) PingJsz(ctx context.Context, o JszOptions, opts ...PingOpt) ([]*Reply[Jsz], error) {
	return all[Jsz](ctx, c, KindJsz, Subject(KindJsz, ""), o, opts)
}

// Accountz asks the server with ID id for the server's accounts (ACCOUNTZ). It fails with
// ErrUnknownServer when no server has that ID, ErrNoSystemAccount when no
// server answers, or the server's *APIError.
func (c *Client) Accountz(ctx context.Context, id string, o AccountzOptions) (*Reply[Accountz], error) {
	return one[Accountz](ctx, c, KindAccountz, id, o)
}

// PingAccountz asks every server (or those o.Filter selects) for the server's accounts
// (ACCOUNTZ) and gathers the replies as the package documentation describes.
func (c *Client) PingAccountz(ctx context.Context, o AccountzOptions, opts ...PingOpt) ([]*Reply[Accountz], error) {
	return all[Accountz](ctx, c, KindAccountz, Subject(KindAccountz, ""), o, opts)
}

// Healthz asks the server with ID id for the server's health (HEALTHZ). It fails with
// ErrUnknownServer when no server has that ID, ErrNoSystemAccount when no
// server answers, or the server's *APIError.
func (c *Client) Healthz(ctx context.Context, id string, o HealthzOptions) (*Reply[Healthz], error) {
	return one[Healthz](ctx, c, KindHealthz, id, o)
}

// PingHealthz asks every server (or those o.Filter selects) for the server's health
// (HEALTHZ) and gathers the replies as the package documentation describes.
func (c *Client) PingHealthz(ctx context.Context, o HealthzOptions, opts ...PingOpt) ([]*Reply[Healthz], error) {
	return all[Healthz](ctx, c, KindHealthz, Subject(KindHealthz, ""), o, opts)
}

// Statsz asks the server with ID id for the server's statistics (STATSZ). It fails with
// ErrUnknownServer when no server has that ID, ErrNoSystemAccount when no
// server answers, or the server's *APIError.
func (c *Client) Statsz(ctx context.Context, id string, o StatszOptions) (*Reply[Statsz], error) {
	return one[Statsz](ctx, c, KindStatsz, id, o)
}

// PingStatsz asks every server (or those o.Filter selects) for the server's statistics
// (STATSZ) and gathers the replies as the package documentation describes.
func (c *Client) PingStatsz(ctx context.Context, o StatszOptions, opts ...PingOpt) ([]*Reply[Statsz], error) {
	return all[Statsz](ctx, c, KindStatsz, Subject(KindStatsz, ""), o, opts)
}

// Ping sends the server ping ($SYS.REQ.SERVER.PING, what "nats server
// ping" sends): every server answers with its Statsz. It gathers as
// PingStatsz does.
func (c *Client) Ping(ctx context.Context, opts ...PingOpt) ([]*Reply[Statsz], error) {
	return all[Statsz](ctx, c, KindStatsz, pingSubject, nil, opts)
}

// Idz asks the server with ID id for its identity (IDZ).
func (c *Client) Idz(ctx context.Context, id string) (*Reply[Idz], error) {
	return one[Idz](ctx, c, KindIdz, id, nil)
}

// PingIdz asks every server for its identity (IDZ): the cheapest way to
// list the servers.
func (c *Client) PingIdz(ctx context.Context, opts ...PingOpt) ([]*Reply[Idz], error) {
	return all[Idz](ctx, c, KindIdz, Subject(KindIdz, ""), nil, opts)
}

// Request asks the server with ID id for any kind, with body as the
// request's JSON options (nil for none), and returns the reply with Data
// the reply's "data" member as sent (the "statsz" member for STATSZ, the
// whole reply for IDZ). It serves the kinds without a typed call (RAFTZ,
// IPQUEUESZ, EXPVARZ, PROFILEZ) and kinds newer than this package.
func (c *Client) Request(ctx context.Context, kind Kind, id string, body any) (*Reply[json.RawMessage], error) {
	return one[json.RawMessage](ctx, c, kind, id, body)
}

// PingRequest is Request to every server, gathering as the Ping calls do.
func (c *Client) PingRequest(ctx context.Context, kind Kind, body any, opts ...PingOpt) ([]*Reply[json.RawMessage], error) {
	return all[json.RawMessage](ctx, c, kind, Subject(kind, ""), body, opts)
}
