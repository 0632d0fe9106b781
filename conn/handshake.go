package conn

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/natsio/natsio/proto"
)

// connectMsg is the CONNECT JSON.
type connectMsg struct {
	Verbose      bool   `json:"verbose"`
	Pedantic     bool   `json:"pedantic"`
	TLSRequired  bool   `json:"tls_required"`
	Name         string `json:"name,omitempty"`
	Lang         string `json:"lang"`
	Version      string `json:"version"`
	Protocol     int    `json:"protocol"`
	Echo         bool   `json:"echo"`
	Headers      bool   `json:"headers"`
	NoResponders bool   `json:"no_responders"`
	User         string `json:"user,omitempty"`
	Pass         string `json:"pass,omitempty"`
	Token        string `json:"auth_token,omitempty"`
	JWT          string `json:"jwt,omitempty"`
	NKey         string `json:"nkey,omitempty"`
	Sig          string `json:"sig,omitempty"`
}

// Version is the client version sent in CONNECT.
const Version = "0.1.0"

// handshake dials s and completes INFO, TLS, CONNECT and PING/PONG within
// the connect timeout (and ctx).
func (nc *Conn) handshake(ctx context.Context, s *server) (*link, *ServerInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, nc.opts.connectTimeout)
	defer cancel()
	deadline, _ := ctx.Deadline()

	dial := nc.opts.dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	c, err := dial(ctx, "tcp", s.addr())
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, context.Canceled) || errors.Is(err, os.ErrDeadlineExceeded) {
			err = &timeoutError{err} // matches ErrTimeout and context.DeadlineExceeded
		}
		return nil, nil, err
	}
	if !nc.opts.stdSocketIO {
		c = fastConn(c)
	}
	// Canceling ctx interrupts blocking reads and writes at once.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	_ = c.SetDeadline(deadline)

	l, info, err := nc.handshakeOn(ctx, c, s)
	if err != nil {
		_ = c.Close()
		// The socket deadline equals ctx's: either may fire first.
		if !errors.Is(err, context.Canceled) && (ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded)) {
			err = &timeoutError{err}
		}
		return nil, nil, err
	}
	if !stop() {
		_ = l.c.Close()
		return nil, nil, ctx.Err()
	}
	_ = l.c.SetDeadline(time.Time{})
	return l, info, nil
}

func (nc *Conn) handshakeOn(ctx context.Context, c net.Conn, s *server) (*link, *ServerInfo, error) {
	base := c
	secure := false
	wantTLS := nc.opts.secure || s.wantsTLS()
	if nc.opts.tlsFirst || (s.isWS() && s.wantsTLS()) {
		tc, err := nc.tlsUpgrade(ctx, c, s)
		if err != nil {
			return nil, nil, err
		}
		c, secure = tc, true
	}
	if s.isWS() {
		wc, err := wsHandshake(ctx, c, s.url, wsOptions{Compression: nc.opts.wsCompression})
		if err != nil {
			return nil, nil, err
		}
		c = wc
	}
	l := newLink(c)
	l.base = base
	r := &l.rd          // the handshake reads until the reader goroutine starts
	r.stats = &nc.stats // socket bytes count from the first one
	r.p.Limits.MaxControlLine = nc.opts.maxControlLine + inboundLineSlack
	op, err := r.next()
	if err != nil {
		return nil, nil, err
	}
	if op.Kind != proto.KindInfo {
		return nil, nil, &ProtocolError{Err: fmt.Errorf("expected INFO, got %v", op.Kind)}
	}
	info, err := parseInfo(op.Text)
	if err != nil {
		return nil, nil, err
	}
	r.setMaxPayload(info.MaxPayload)
	if wc, ok := l.c.(*wsConn); ok {
		// Compressed messages must not inflate past max_payload.
		wc.setMaxMessage(int(info.MaxPayload))
	}
	if !secure && !s.isWS() && (info.TLSRequired || wantTLS) {
		if !info.TLSRequired && !info.TLSAvailable {
			return nil, nil, ErrTLSRequired
		}
		tc, err := nc.tlsUpgrade(ctx, c, s)
		if err != nil {
			return nil, nil, err
		}
		l.c, secure = tc, true
	}
	if wantTLS && !secure {
		return nil, nil, ErrTLSRequired
	}
	cm, err := nc.connectMsg(s, info, secure)
	if err != nil {
		return nil, nil, err
	}
	js, err := json.Marshal(cm)
	if err != nil {
		return nil, nil, err
	}
	out := proto.AppendConnect(nil, js)
	out = proto.AppendPing(out)
	wipe(js)
	n, err := l.c.Write(out)
	nc.stats.socketOut.Add(uint64(n))
	wipe(out)
	if err != nil {
		return nil, nil, err
	}
	for {
		op, err := r.next()
		if err != nil {
			return nil, nil, err
		}
		switch op.Kind {
		case proto.KindPong:
			return l, info, nil
		case proto.KindErr:
			return nil, nil, classifyErr(op.Text)
		case proto.KindPing:
			n, err := l.c.Write(proto.AppendPong(nil))
			nc.stats.socketOut.Add(uint64(n))
			if err != nil {
				return nil, nil, err
			}
		case proto.KindInfo:
			if ni, err := parseInfo(op.Text); err == nil {
				info = ni
				r.setMaxPayload(info.MaxPayload)
			}
		}
	}
}

func (nc *Conn) tlsUpgrade(ctx context.Context, c net.Conn, s *server) (net.Conn, error) {
	tc := tls.Client(c, nc.opts.clientTLS(s.tlsName))
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("tls handshake: %w", err)
	}
	return tc, nil
}

// connectMsg builds CONNECT for server s. Credentials of any kind go to a
// discovered server only over TLS unless SendCredentialsToDiscovered.
func (nc *Conn) connectMsg(s *server, info *ServerInfo, secure bool) (*connectMsg, error) {
	o := &nc.opts
	cm := &connectMsg{
		TLSRequired:  secure,
		Name:         o.name,
		Lang:         "go-natsio",
		Version:      Version,
		Protocol:     1,
		Echo:         !o.noEcho,
		Headers:      true,
		NoResponders: true,
	}
	user, pass, token := o.user, o.pass.reveal(), o.token.reveal()
	if ui := s.url.User; user == "" && token == "" {
		if ui == nil && s.discovered {
			// A gossiped server inherits the credentials of the named URLs.
			ui = nc.pool.userInfo
		}
		if ui != nil {
			if p, ok := ui.Password(); ok {
				user, pass = ui.Username(), p
			} else {
				token = ui.Username()
			}
		}
	}
	if s.discovered && !secure && !o.discoveredCreds {
		// Nothing at all for a gossiped server over plaintext: not even a
		// signature, which it could relay to a server whose nonce it is.
		return cm, nil
	}
	cm.User, cm.Pass, cm.Token = user, pass, token
	if o.userJWT != nil {
		jwt, err := o.userJWT()
		if err != nil {
			return nil, fmt.Errorf("%w: user JWT: %v", ErrBadCredentials, err)
		}
		cm.JWT = jwt
	} else if o.nkeyPub != "" {
		cm.NKey = o.nkeyPub
	}
	if o.signer != nil && info.Nonce != "" {
		sig, err := o.signNonce(info.Nonce)
		if err != nil {
			return nil, err
		}
		cm.Sig = sig
	}
	return cm, nil
}
