//go:build race

package chaos

// raceEnabled reports whether the test binary runs under the race detector;
// the short run is scaled down and its timing bounds widened accordingly.
const raceEnabled = true
