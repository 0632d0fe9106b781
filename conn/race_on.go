//go:build race

package conn

// raceEnabled reports a build with the race detector (fastio_linux.go).
const raceEnabled = true
