// Package surface holds tests of the rules that every public package of
// natsio follows alike (deadlines and cancellation, one option error),
// which no single package's tests can state on their own. It has no code.
package surface
