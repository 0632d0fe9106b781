package testserver

import (
	"testing"

	"github.com/natsio/natsio/natstest"
)

// RunIfChild is natstest.RunIfChild.
func RunIfChild() { natstest.RunIfChild() }

// Process is natstest.Process.
type Process = natstest.Process

// StartProcess is natstest.NewProcess.
func StartProcess(t testing.TB, jetstream bool) *Process {
	t.Helper()
	return natstest.NewProcess(t, jetstream)
}
