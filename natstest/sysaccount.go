package natstest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/conn"
)

// The system account of SystemAccount and the user that logs into it.
const (
	SystemAccountName = "SYS"
	SystemUser        = "sys"
	SystemPassword    = "sys"
)

// anonymousUser is the user that clients without credentials become when
// SystemAccount is the only authentication (nats-server's no_auth_user):
// they land in the default account as before.
const anonymousUser = "natstest"

// systemKinds are the monitoring kinds every server answers on
// $SYS.REQ.SERVER.<id>.<kind>; WaitSystemInterest checks them all.
var systemKinds = []string{
	"IDZ", "STATSZ", "VARZ", "SUBSZ", "CONNZ", "ROUTEZ", "GATEWAYZ", "LEAFZ",
	"ACCOUNTZ", "JSZ", "HEALTHZ", "EXPVARZ", "IPQUEUESZ", "RAFTZ",
}

// SystemAccount gives the server an account "SYS" (SystemAccountName) as its
// system account, with the user SystemUser / SystemPassword, so that a
// client can read the monitoring API ($SYS.REQ.SERVER.…): connect with
// Server.ConnectSystem or Server.SystemConnectOptions. Clients without
// credentials still land in the default account (the server's
// no_auth_user), so Server.Connect is unchanged; with UserPassword or
// Accounts, those users stay as they are.
//
// In a cluster every node gets the account and the cluster is ready only
// when each node's system account reaches every other (see
// Server.WaitSystemInterest). A leaf node (NewLeaf) whose hub and itself
// both have SystemAccount also links the two system accounts, so that a
// request to all servers reaches the leaf too. In operator mode the
// operator's system account is used and this option is not needed.
func SystemAccount() Option {
	return Option{func(c *config) { c.sysAccount = true }}
}

// withSystemAccount returns the accounts of the configuration file: those
// of Accounts plus the system account.
func (c *config) withSystemAccount() []Account {
	if !c.sysAccount || c.operator != nil {
		return c.accounts
	}
	sys := Account{Name: SystemAccountName, Users: []User{{Name: SystemUser, Password: SystemPassword}}}
	return append(append([]Account(nil), c.accounts...), sys)
}

// systemAccountText is the configuration line naming the system account.
func (c *config) systemAccountText() string {
	if !c.sysAccount || c.operator != nil {
		return ""
	}
	return fmt.Sprintf("system_account: %s\n", quote(SystemAccountName))
}

// anonymous reports whether clients need no credentials apart from the
// system account's user.
func (c *config) anonymous() bool {
	return c.token == "" && c.user == "" && len(c.nkeys) == 0 && len(c.accounts) == 0 && c.operator == nil
}

// applySystemAccount lets clients without credentials in when the system
// account's user is the only one configured.
func applySystemAccount(c *config, so *server.Options) {
	if !c.sysAccount || !c.anonymous() {
		return
	}
	so.Users = append(so.Users, &server.User{Username: anonymousUser, Password: anonymousUser})
	so.NoAuthUser = anonymousUser
}

// systemLeafRemote returns the leaf node remote that links the leaf's
// system account to its hub's, or nil when either side has none.
func systemLeafRemote(leaf, hub *config, hubLeafURL string) (*server.RemoteLeafOpts, error) {
	if !leaf.sysAccount || !hub.sysAccount || leaf.operator != nil || hub.operator != nil {
		return nil, nil
	}
	u, err := url.Parse(hubLeafURL)
	if err != nil {
		return nil, err
	}
	u.User = url.UserPassword(SystemUser, SystemPassword)
	return &server.RemoteLeafOpts{URLs: []*url.URL{u}, LocalAccount: SystemAccountName}, nil
}

// hubLeafURL is the leaf node URL of a hub on port.
func hubLeafURL(port int) string {
	return "nats-leaf://" + net.JoinHostPort(loopback, strconv.Itoa(port))
}

// SystemConnectOptions returns the options that log into the server's
// system account: SystemUser with SystemPassword (SystemAccount), or a user
// of the operator's system account made for the server (OperatorMode),
// plus TLS trust as for ConnectOptions. Without either the server's
// system account has no user, and it returns nil.
func (s *Server) SystemConnectOptions() []conn.Option {
	var o []conn.Option
	switch {
	case s.cfg.operator != nil:
		s.mu.Lock()
		if s.sysUser == nil {
			s.sysUser = s.cfg.operator.System.NewUser("natstest-system")
		}
		u := s.sysUser
		s.mu.Unlock()
		o = append(o, u.Option())
	case s.cfg.sysAccount:
		o = append(o, conn.UserInfo(SystemUser, SystemPassword))
	default:
		return nil
	}
	return append(o, s.transportOptions()...)
}

// ConnectSystem connects to the server as a user of its system account (see
// SystemConnectOptions) and closes the connection when tb's test ends. It
// ends the test with tb.Fatalf when the server has no system account user
// or the connection fails.
func (s *Server) ConnectSystem(tb testing.TB, opts ...conn.Option) *conn.Conn {
	tb.Helper()
	so := s.SystemConnectOptions()
	if so == nil {
		tb.Fatalf("natstest: the server has no system account user: start it with SystemAccount or OperatorMode")
	}
	return connectTB(tb, s.URL(), append(so, opts...))
}

// systemReadyTimeout bounds WaitSystemInterest.
const systemReadyTimeout = 20 * time.Second

// WaitSystemInterest waits until a request made in s's system account
// reaches every server of others: until s sees, for each of them, the
// subscriptions of all its monitoring kinds ($SYS.REQ.SERVER.<id>.<kind>).
// Servers announce their subscriptions to routes and leaf nodes in the order
// they make them, so once these are seen a request to all servers reaches
// them too. It fails after 20 seconds, or at once when a server is not
// running.
func (s *Server) WaitSystemInterest(others ...*Server) error {
	err := waitFor(systemReadyTimeout, func() error {
		return systemReach(s.Server(), servers(others))
	})
	if err != nil {
		return fmt.Errorf("natstest: system account: %w", err)
	}
	return nil
}

// servers returns the running instances of ss (nil for one not running).
func servers(ss []*Server) []*server.Server {
	out := make([]*server.Server, len(ss))
	for i, s := range ss {
		out[i] = s.Server()
	}
	return out
}

// systemReach reports why a request from srv's system account does not
// reach all of others yet, or nil.
func systemReach(srv *server.Server, others []*server.Server) error {
	if srv == nil {
		return errStop{errors.New("server not running")}
	}
	acc := srv.SystemAccount()
	if acc == nil {
		return errStop{errors.New("the server has no system account")}
	}
	for _, osrv := range others {
		if osrv == nil {
			return errStop{errors.New("a server to reach is not running")}
		}
		for _, k := range systemKinds {
			subj := "$SYS.REQ.SERVER." + osrv.ID() + "." + k
			if !acc.SubscriptionInterest(subj) {
				return fmt.Errorf("%s does not reach %s yet (%s)", srv.Name(), osrv.Name(), k)
			}
		}
	}
	return nil
}

// clusterSystemReady reports why the system accounts of the running nodes
// do not all reach each other yet, or nil (also without SystemAccount).
func clusterSystemReady(running []*Server) error {
	if len(running) == 0 || !running[0].cfg.sysAccount {
		return nil
	}
	all := servers(running)
	for _, srv := range all {
		if err := systemReach(srv, all); err != nil {
			return err
		}
	}
	return nil
}

// leafSystemReady reports why the system accounts of a leaf and its hub do
// not reach each other yet, or nil.
func leafSystemReady(leaf *server.Server, hub *Server) error {
	h := hub.Server()
	if err := systemReach(leaf, []*server.Server{h}); err != nil {
		return err
	}
	return systemReach(h, []*server.Server{leaf})
}
