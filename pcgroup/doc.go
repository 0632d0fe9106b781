// Package pcgroup runs partitioned consumer groups: a stream's messages
// split into a fixed number of partitions by a key in their subjects, each
// partition consumed by exactly one member of the group at a time, so that
// every key is processed in order while the group as a whole scales out.
// Groups are wire-compatible with orbit.go's pcgroups (v0.2.2): the same KV
// buckets, keys and JSON, stream and consumer names, subject transforms and
// priority group, so members of both clients serve one group and either
// side's tools administer groups the other created.
//
// # Kinds
//
// A Static group consumes a stream whose subjects already begin with a
// partition number (the stream's subject transform puts it there with
// {{partition(n,…)}}); its configuration, in the StaticBucket, does not
// change while members run (a change ends them with ErrConfigChanged).
//
// An Elastic group sources a stream into a work-queue stream of its own,
// "<stream>-<group>", whose subject transforms put the partition number
// first; members are added and dropped (AddMembers, DropMembers,
// SetMappings) while members run, and each running instance moves to its
// new partitions without a restart.
//
//	pcgroup.CreateElastic(ctx, js, "ORDERS", "billing", pcgroup.ElasticConfig{MaxMembers: 8,
//		PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: "orders.*", PartitioningWildcards: []int{1}}}})
//	pcgroup.AddMembers(ctx, js, "ORDERS", "billing", "m1", "m2")
//	m, err := pcgroup.Join(ctx, js, pcgroup.Elastic, "ORDERS", "billing", "m1",
//		func(ctx context.Context, msg *jsapi.Msg) error { use(msg); return nil }, pcgroup.MemberConfig{})
//	if err != nil {
//		return err
//	}
//	defer func() { m.Stop(); <-m.Done() }()
//
// # Members and instances
//
// A member owns a consumer filtered to its partitions, in priority group
// PriorityGroup with the pinned-client policy. Any number of instances may
// Join under one member name: the server pins one and gives it the
// member's messages; the others stand by and take over once the pinned one
// has not pulled for the pin timeout (the consumer's AckWait, at least one
// second), or at once after StepDown.
//
// Within an instance, messages run through pull.ConsumeKeyed: by default
// one at a time per partition and the instance's partitions in parallel, or
// per a finer key (MemberConfig.Keyed). A message is acknowledged after its
// handler returns nil; see pull.ConsumeKeyed for the order kept across
// failures. Join needs a server with priority groups (2.11+), and fails with
// a *jsapi.FeatureError on older ones, as do CreateStatic and CreateElastic.
//
// # Guarantees and their limits
//
// One instance holds a member's pin at a time, and a partition belongs to
// one member, so a key is handled by one handler at a time, in stream order,
// while the membership holds. An instance taking a pin holds its handlers
// until the server confirms that every message the consumer delivered and
// has not had acknowledged is with it (pull.Keyed.HoldConfirmed): what a
// previous holder left unacknowledged, redelivered after AckWait (or its
// BackOff) however late, is handled before its keys' later messages. Order
// holds across a failover, which costs the pin timeout and the wait for
// those redeliveries; a first holder with nothing outstanding starts at
// once. When the membership changes, an instance stops and waits for its
// handlers before its consumer is replaced; an instance that lost its
// connection can still be running a handler while the message,
// unacknowledged, is redelivered elsewhere after AckWait: make handlers
// idempotent, or acknowledge with AckSync and deduplicate.
package pcgroup
