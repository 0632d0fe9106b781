package testserver

import "github.com/natsio/natsio/natstest"

// LogEnv is the environment variable that turns server logging on
// (natstest.LogEnv): "1" (or any other non-empty value) logs notices,
// warnings and errors to t.Log, "debug" adds debug output and "trace" adds
// protocol traces.
const LogEnv = natstest.LogEnv
