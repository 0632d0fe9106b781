package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/spf13/cobra"
)

// serverFlags configure `natsio server`.
type serverFlags struct {
	host  string
	port  int
	store string
	name  string
	log   bool
	debug bool
}

func (a *app) serverCmd() *cobra.Command {
	var f serverFlags
	c := &cobra.Command{
		Use:   "server",
		Short: "Run an embedded NATS server, or inspect the servers you connect to",
		Long: `Run an embedded nats-server (v` + server.VERSION + `) with JetStream enabled, for trying
natsio with nothing installed. It listens on --host:--port (127.0.0.1:4222 by
default, the address every other command connects to), stores JetStream data
under --store, prints its URL once it accepts connections, and shuts down
cleanly on Ctrl-C (SIGINT) or SIGTERM. Streams survive a restart with the same
--store.

With the connection flags --user/--password or --token the server requires
those credentials from its clients (who pass the same flags).

'natsio server' with no subcommand and 'natsio server run' both start the
embedded server. The other subcommands are the nats CLI's monitoring group:
they connect to --server as a user of the system account and read the
servers' monitoring API (list, info, ping, report, request, check).`,
		Example: `  natsio server                                  # nats://127.0.0.1:4222
  natsio server run                              # the same
  natsio server list --user sys --password sys   # the servers, from the system account
  natsio server --port 4333 --store /tmp/js      # another port and store
  natsio server --port 0                         # any free port (printed)
  natsio server --log                            # show the server's log
  natsio server --user me --password secret      # require a user and password`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error { return a.runServer(c, &f) },
	}
	serverRunFlags(c, &f)
	a.addServerMonitoring(c)
	return c
}

// serverRunFlags adds the flags of the embedded server to c (`server` and
// `server run`).
func serverRunFlags(c *cobra.Command, f *serverFlags) {
	fl := c.Flags()
	fl.StringVar(&f.host, "host", "127.0.0.1", "address to listen on (0.0.0.0 for every interface)")
	fl.IntVarP(&f.port, "port", "p", 4222, "client port (0 picks a free port)")
	fl.StringVar(&f.store, "store", defaultStoreDir(), "JetStream storage directory")
	fl.StringVar(&f.name, "server-name", "", "server name (default: generated)")
	fl.BoolVar(&f.log, "log", false, "print the server's log to stderr")
	fl.BoolVar(&f.debug, "debug", false, "print the server's debug log to stderr (implies --log)")
}

// defaultStoreDir is <user cache dir>/natsio/jetstream.
func defaultStoreDir() string {
	dir, err := os.UserCacheDir()
	if err != nil || dir == "" {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "natsio", "jetstream")
}

func (a *app) runServer(c *cobra.Command, f *serverFlags) error {
	ctx := c.Context()
	if f.port < 0 || f.port > 65535 {
		return usageError{err: fmt.Errorf("--port %d is not a port number (0-65535)", f.port), cmd: c}
	}
	if err := os.MkdirAll(f.store, 0o750); err != nil {
		return userError{msg: fmt.Sprintf("cannot create the store directory %s: %v", f.store, err),
			hint: "pick a writable directory with --store"}
	}
	port := f.port
	if port == 0 {
		port = server.RANDOM_PORT
	} else {
		// Say clearly when the port is taken, rather than after a timeout.
		l, err := net.Listen("tcp", net.JoinHostPort(f.host, strconv.Itoa(port)))
		if err != nil {
			return userError{msg: fmt.Sprintf("cannot listen on %s:%d: %v", f.host, port, errors.Unwrap(err)),
				hint: "another server may be running there; pick another port with --port (0 for any free one)", err: err}
		}
		l.Close()
	}

	opts := &server.Options{
		ServerName: f.name,
		Host:       f.host,
		Port:       port,
		JetStream:  true,
		StoreDir:   f.store,
		NoSigs:     true, // we handle signals
		NoLog:      !(f.log || f.debug),
		Debug:      f.debug,
	}
	switch {
	case a.conn.user != "" && a.conn.token != "":
		return usageError{err: errors.New("the server takes --user/--password or --token, not both"), cmd: c}
	case a.conn.user != "":
		opts.Username, opts.Password = a.conn.user, a.conn.password
	case a.conn.token != "":
		opts.Authorization = a.conn.token
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return userError{msg: "cannot configure the server: " + err.Error(), err: err}
	}
	var logw io.Writer = io.Discard
	if f.log || f.debug {
		logw = a.stderr
	}
	lg := &serverLog{w: logw, debug: f.debug}
	srv.SetLoggerV2(lg, f.debug, false, false)
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		srv.WaitForShutdown()
		msg := "the server did not start"
		if fatal := lg.fatal(); fatal != "" {
			msg += ": " + fatal
		}
		return userError{msg: msg, hint: "run with --log to see the server's log; check --store and --port"}
	}
	if lg.fatal() != "" || !srv.JetStreamEnabled() {
		srv.Shutdown()
		srv.WaitForShutdown()
		return userError{msg: "JetStream did not start: " + lg.fatal(), hint: "check that --store is writable and has free space"}
	}

	url := srv.ClientURL()
	if a.json {
		err = a.printJSONLine(map[string]any{"url": url, "store": f.store, "version": server.VERSION, "server_id": srv.ID(), "jetstream": true})
	} else {
		_, err = fmt.Fprintf(a.stdout, "natsio server (nats-server v%s, JetStream) listening on %s\n  store: %s\n  stop with Ctrl-C\n",
			server.VERSION, url, f.store)
	}
	if err != nil {
		srv.Shutdown()
		return err
	}

	<-ctx.Done()
	fmt.Fprintln(a.stderr, "natsio server: shutting down")
	srv.Shutdown()
	srv.WaitForShutdown()
	fmt.Fprintln(a.stderr, "natsio server: stopped")
	return nil
}

// serverLog is the embedded server's logger: it writes to w and keeps
// the first fatal error so that a failed start can be explained.
type serverLog struct {
	w     io.Writer
	debug bool

	mu        sync.Mutex
	fatalText string
}

func (l *serverLog) fatal() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fatalText
}

func (l *serverLog) print(level, format string, v []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "[server] %s %s\n", level, fmt.Sprintf(format, v...))
}

func (l *serverLog) Noticef(format string, v ...any) { l.print("INF", format, v) }
func (l *serverLog) Warnf(format string, v ...any)   { l.print("WRN", format, v) }
func (l *serverLog) Errorf(format string, v ...any)  { l.print("ERR", format, v) }
func (l *serverLog) Tracef(format string, v ...any)  { l.print("TRC", format, v) }

func (l *serverLog) Debugf(format string, v ...any) {
	if l.debug {
		l.print("DBG", format, v)
	}
}

// Fatalf records the error; the server stops what it was doing, and
// runServer reports it (the server's own logger would exit the process).
func (l *serverLog) Fatalf(format string, v ...any) {
	l.print("FTL", format, v)
	l.mu.Lock()
	if l.fatalText == "" {
		l.fatalText = fmt.Sprintf(format, v...)
	}
	l.mu.Unlock()
}
