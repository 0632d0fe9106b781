package ordered

// InitialPending returns how many messages the server-side consumer that
// New created had to deliver when it was created (its num_pending then):
// what the first read yields before any message stored after New
// returned, unless the consumer is recreated before they have all been
// yielded (see OnReset). A watch that must begin when it is called, not
// when it is first read, counts its initial values with it.
func (c *Consumer) InitialPending() uint64 { return c.initialPending }
