package natstest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// leafReconnect is how soon a leaf node dials its hub again after losing
// it (nats-server's default is 1 s).
const leafReconnect = 100 * time.Millisecond

// NewLeaf starts a second server connected to hub as a leaf node and stops
// it when tb's test ends; see StartLeaf. A failure ends the test with
// tb.Fatalf.
func NewLeaf(tb testing.TB, hub *Server, opts ...Option) *Server {
	tb.Helper()
	s, err := startLeaf(tb, hub, opts)
	if err != nil {
		tb.Fatalf("natstest: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// StartLeaf starts a server configured by opts that connects to hub, which
// must have been started with LeafNodes, as a leaf node of the default
// account, and returns once the leaf connection is up. Give the leaf its
// own JetStream with JetStreamDomain (say "leaf") and the hub another
// domain (say "hub"): a client of the leaf then reaches the hub's
// JetStream with jsapi.Domain("hub"), and StartLeaf also waits until the
// hub's JetStream API is reachable from the leaf. Restart of either side
// waits for the leaf connection again only on the leaf's side. Call Close
// when done.
func StartLeaf(hub *Server, opts ...Option) (*Server, error) {
	return startLeaf(nil, hub, opts)
}

func startLeaf(tb testing.TB, hub *Server, opts []Option) (*Server, error) {
	port := hub.LeafNodePort()
	if port == 0 {
		return nil, errors.New("the hub has no leaf node listener: start it with LeafNodes")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	cfg.leafRemote = hubLeafURL(port)
	sysRemote, err := systemLeafRemote(cfg, hub.cfg, cfg.leafRemote)
	if err != nil {
		return nil, err
	}
	s, err := newServer(tb, cfg, nil, ports{})
	if err != nil {
		return nil, err
	}
	s.sysRemote = sysRemote
	hubDomain := hub.cfg.domain
	s.ready = func(srv *server.Server) error {
		if srv.NumLeafNodes() == 0 {
			return errors.New("the leaf node is not connected to its hub")
		}
		if sysRemote != nil {
			if err := leafSystemReady(srv, hub); err != nil {
				return err
			}
		}
		if hubDomain == "" || hub.cfg.noJetStream {
			return nil
		}
		// The hub's JetStream answers once its API's interest has
		// reached the leaf.
		acc := srv.GlobalAccount()
		if acc == nil || !acc.SubscriptionInterest("$JS."+hubDomain+".API.INFO") {
			return fmt.Errorf("the hub's JetStream (domain %q) is not reachable from the leaf yet", hubDomain)
		}
		return nil
	}
	if err := s.start(); err != nil {
		s.Close()
		return nil, fmt.Errorf("start leaf: %w", err)
	}
	return s, nil
}
