package pull

import "sync/atomic"

// Stats are a consumer handle's counters, summed over its Fetch calls and
// Messages iterations since FromInfo made the handle.
type Stats struct {
	// Pulls counts pull requests sent.
	Pulls uint64
	// Messages counts messages received: those a Fetch returned, and
	// those a Messages iteration took from the server (yielded, or still
	// queued when the loop ended).
	Messages uint64
	// Heartbeats counts idle heartbeats received; MissedHeartbeats the
	// times two in a row were missed (ErrNoHeartbeat).
	Heartbeats, MissedHeartbeats uint64
	// NoMessages (404), Expired (408) and Conflicts (409, any reason)
	// count the statuses that ended pulls; OtherStatuses the rest (400,
	// 423 pin mismatch, 503 no responders…).
	NoMessages, Expired, Conflicts, OtherStatuses uint64
	// Resets counts the times a Messages iteration forgot its pulls and
	// pulled afresh: reconnect, leadership change, missed heartbeats, or a
	// status that cannot be matched to a pull.
	Resets uint64
	// Skipped counts the messages on the pull inboxes that were not
	// yielded because the server did not deliver them (ErrStrayMessage):
	// another client published them there.
	Skipped uint64
	// Unconfirmed counts the statuses claiming a read's end that consumer
	// info did not confirm, which were ignored (ErrUnconfirmedStatus).
	Unconfirmed uint64
	// UnknownStatuses counts the statuses this client does not know
	// (ErrUnknownStatus), each of which ended one pull.
	UnknownStatuses uint64
}

// counters are a Consumer's atomic counts.
type counters struct {
	pulls, messages, heartbeats, missedHeartbeats atomic.Uint64
	noMessages, expired, conflicts, otherStatuses atomic.Uint64
	resets, skipped, unconfirmed, unknown         atomic.Uint64
}

// noteStatus counts a status message.
func (c *counters) noteStatus(st status) {
	switch st.code {
	case 100:
		c.heartbeats.Add(1)
	case 404:
		c.noMessages.Add(1)
	case 408:
		c.expired.Add(1)
	case 409:
		c.conflicts.Add(1)
	default:
		c.otherStatuses.Add(1)
	}
}

// Stats returns the handle's counters.
func (c *Consumer) Stats() Stats {
	k := &c.count
	return Stats{
		Pulls: k.pulls.Load(), Messages: k.messages.Load(),
		Heartbeats: k.heartbeats.Load(), MissedHeartbeats: k.missedHeartbeats.Load(),
		NoMessages: k.noMessages.Load(), Expired: k.expired.Load(),
		Conflicts: k.conflicts.Load(), OtherStatuses: k.otherStatuses.Load(),
		Resets: k.resets.Load(), Skipped: k.skipped.Load(),
		Unconfirmed: k.unconfirmed.Load(), UnknownStatuses: k.unknown.Load(),
	}
}
