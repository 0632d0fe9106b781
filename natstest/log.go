package natstest

import (
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"testing"
)

// LogEnv is the environment variable that turns server logging on: "1" (or
// any other non-empty value) logs notices, warnings and errors, "debug"
// adds debug output and "trace" protocol traces. Servers of NewServer log
// to tb.Log, those of Start to standard error. Logs are off by default.
const LogEnv = "NATSIO_TEST_SERVER_LOG"

// logSink forwards server log lines to a testing.TB (or standard error)
// until it is closed. Closing happens after the server has shut down, so a
// stray log call can never reach t.Log after the test has finished.
type logSink struct {
	mu     sync.Mutex
	tb     testing.TB
	on     bool
	closed bool
}

func newLogSink(tb testing.TB) *logSink {
	return &logSink{tb: tb, on: os.Getenv(LogEnv) != ""}
}

// levels reports whether debug and trace logging are wanted.
func (ls *logSink) levels(c *config) (debug, trace bool) {
	env := strings.ToLower(os.Getenv(LogEnv))
	if env == "" {
		return false, false
	}
	trace = c.trace || env == "trace"
	debug = c.debug || trace || env == "debug"
	return debug, trace
}

func (ls *logSink) logf(prefix, format string, args ...any) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if !ls.on || ls.closed {
		return
	}
	if ls.tb != nil {
		ls.tb.Logf("%s%s", prefix, fmt.Sprintf(format, args...))
		return
	}
	log.Printf("%s%s", prefix, fmt.Sprintf(format, args...))
}

func (ls *logSink) close() {
	ls.mu.Lock()
	ls.closed = true
	ls.mu.Unlock()
}

// runLogger implements server.Logger for one server run. Besides forwarding
// to the sink it remembers fatal errors (such as "address in use") so that
// a start can fail at once with a useful message instead of timing out; it
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
