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

	// inlineBacklog is how many queued messages make a consumer reading
	// inline stop in the middle of a message to take them. Higher: fewer
	// extra reads. Lower: a consumer of a subject busier than it can
	// parse sees its queue sooner.
	inlineBacklog = 8192

	// slabBytes and msgChunk size the slabs delivered messages are carved
	// from (bodies up to slabBytes/4, Msg structs msgChunk at a time).
	// Larger: fewer allocations. Smaller: a kept message pins less.
	slabBytes = 64 << 10
	msgChunk  = 128

	// maxShells bounds the Msgs a lent subscription keeps for reuse,
	// maxSpares the read buffers it keeps while views of one are in use.
	maxShells = 4096
	maxSpares = 2
)

// The reader goroutine's park (role.go).
const (
	// parkDelay is how long the reader goroutine first leaves the socket
	// to requesters after a response. Longer: fewer wake-ups during a
	// loop of requests. Shorter: an unrelated message waits less for a
	// reader after the loop ends.
	parkDelay = time.Millisecond

	// parkMax bounds the doubled waits during a loop of requests: the
	// longest a subscription's message can wait for a reader after such
	// a loop ends.
	parkMax = 8 * time.Millisecond

	// parkQuietMax replaces parkMax while the connection has no
	// subscription but the request inbox: only PINGs, INFO, errors and
	// late responses can arrive unasked, and none needs reading at once.
	parkQuietMax = time.Second
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
