// Package chaos holds natsio's chaos test, TestChaos: every workload of
// RELIABILITY.md §d.2 (sync and async publishers with message IDs, a durable
// pull consumer, an ordered consumer (taking its messages lent),
// request/reply, a key-value updater with
// a watch, atomic batches, fast-ingest batches) runs at once against
// embedded nats-servers while a seeded schedule injects faults (restarts,
// proxy cuts, stalls, throttling, one-byte chunking, lame duck, corruption,
// consumer and stream deletion, then cluster leader kills, a lost quorum and
// a step-down). An oracle then checks the ten properties of §d.4 and the
// test writes the figures of §e as JSON (to $CHAOS_OUT, or a temporary
// directory) and as a table in the log.
//
// The package has no non-test code: everything lives in _test.go files so
// that the embedded server is compiled once, here, and never reaches library
// code.
//
// Running it:
//
//	$ go test ./chaos -run TestChaos -v                 # short run (≤ 90 s, ≤ 60 s with -race)
//	$ SOAK_SECONDS=240 go test ./chaos -run TestChaos -v -timeout 15m   # the soak (make soak)
//	$ CHAOS_SEED=42 ...                                  # replay a schedule
package chaos
