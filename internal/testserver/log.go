package testserver

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// LogEnv is the environment variable that turns server logging on: "1" (or
// any other non-empty value) logs notices, warnings and errors to t.Log,
// "debug" adds debug output and "trace" adds protocol traces.
const LogEnv = "NATSIO_TEST_SERVER_LOG"

// logSink forwards server log lines to a testing.TB until it is closed.
// Closing happens in the test cleanup after the server has shut down, so
// stray log calls can never hit t.Log after the test has finished.
type logSink struct {
	mu     sync.Mutex
	t      testing.TB
	on     bool
	closed bool
}

func newLogSink(t testing.TB) *logSink {
	return &logSink{t: t, on: os.Getenv(LogEnv) != ""}
}

// levels reports whether debug and trace logging are wanted.
func (ls *logSink) levels(o *Options) (debug, trace bool) {
	env := strings.ToLower(os.Getenv(LogEnv))
	if env == "" {
		return false, false
	}
	trace = o.Trace || env == "trace"
	debug = o.Debug || trace || env == "debug"
	return debug, trace
}

func (ls *logSink) logf(prefix, format string, args ...any) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.on && !ls.closed {
		ls.t.Logf("%s%s", prefix, fmt.Sprintf(format, args...))
	}
}

func (ls *logSink) close() {
	ls.mu.Lock()
	ls.closed = true
	ls.mu.Unlock()
}

// runLogger implements server.Logger for one server run. Besides forwarding
// to the sink it remembers fatal errors (such as "address in use") so that
// startup can fail fast with a useful message instead of timing out; it
// never exits the process.
type runLogger struct {
	sink   *logSink
	prefix string

	mu    sync.Mutex
	fatal []string
}

func (l *runLogger) Noticef(format string, v ...any) { l.sink.logf(l.prefix+"[INF] ", format, v...) }
func (l *runLogger) Warnf(format string, v ...any)   { l.sink.logf(l.prefix+"[WRN] ", format, v...) }
func (l *runLogger) Errorf(format string, v ...any)  { l.sink.logf(l.prefix+"[ERR] ", format, v...) }
func (l *runLogger) Debugf(format string, v ...any)  { l.sink.logf(l.prefix+"[DBG] ", format, v...) }
func (l *runLogger) Tracef(format string, v ...any)  { l.sink.logf(l.prefix+"[TRC] ", format, v...) }

func (l *runLogger) Fatalf(format string, v ...any) {
	l.sink.logf(l.prefix+"[FTL] ", format, v...)
	l.mu.Lock()
	l.fatal = append(l.fatal, fmt.Sprintf(format, v...))
	l.mu.Unlock()
}

// fatalError returns the fatal errors logged so far, or "".
func (l *runLogger) fatalError() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.fatal, "; ")
}
