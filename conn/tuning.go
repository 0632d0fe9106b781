package conn

import "time"

// The connection's tuning constants, each with what it trades. Why each
// has the value it has (the measurements) is in docs/performance.md,
// "The client's tuning constants".

// Reading.
const (
	// minReadBuf is a new link's read buffer; it doubles after each read
	// that filled it, up to readBufSize. Small: an idle connection holds
	// little. Large: a busy one reads more per system call.
	minReadBuf  = 4 << 10
	readBufSize = 64 << 10

	// wakeBatch is how many queued messages may wait for their
	// consumer's wake-up while the reader goes on parsing one read's
	// worth of data. Higher: fewer wake-ups per read. Lower: a consumer
	// on another core starts sooner.
	wakeBatch = 1024

	// slabBytes and msgChunk bound the chunks a subscription's delivered
	// messages are carved from (bodies up to slabBytes/4, Msg structs
	// msgChunk at a time); a subscription's first chunks hold
	// firstSlabBytes and firstMsgChunk, and each refill doubles them.
	// Larger: fewer allocations. Smaller: an idle subscription holds
	// less, and the chunk being filled, which the pending limits do not
	// count, is smaller.
	slabBytes      = 64 << 10
	msgChunk       = 128
	firstSlabBytes = 256
	firstMsgChunk  = 2

	// maxSpares bounds the free arenas (64 KiB each) a lent subscription
	// keeps for reuse. Higher: a consumer that falls behind in bursts
	// allocates nothing once warm. Lower: less memory held after a burst.
	maxSpares = 64
)

// Writing.
const (
	// highWater is how many queued bytes make a publisher wait for the
	// flusher; maxSpare the largest spare buffer kept. Higher: more
	// coalescing and memory. Lower: publishers wait sooner.
	highWater = 256 << 10
	maxSpare  = 2 * highWater

	// lazyDelay is the longest a lazily published message (an
	// acknowledgement) waits for a write to share. Longer: more sharing.
	// Shorter: a server waiting for it waits less.
	lazyDelay = time.Millisecond

	// lazyKick is how many lazily queued bytes wake the flusher at once:
	// enough for one large write.
	lazyKick = 64 << 10

	// subBurstGap is the longest pause between two Subscribe calls of
	// one burst, whose SUB lines then share writes; subMaxWait bounds how
	// long a SUB of a burst may wait.
	subBurstGap = lazyDelay
	subMaxWait  = 5 * lazyDelay

	// maxYieldPending is the most outstanding requests at which the
	// flusher yields once before writing, letting concurrent requesters
	// add theirs to the write. Higher: more coalescing under many
	// requesters. Lower: less latency for each.
	maxYieldPending = 256

	// maxFreeReplies bounds the reply tokens kept for reuse: enough for
	// a window of concurrent requesters, few enough for the server's
	// routing cache.
	maxFreeReplies = 64
)
