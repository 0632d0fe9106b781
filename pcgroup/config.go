package pcgroup

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Names shared with orbit.go's pcgroups: the KV buckets holding the groups'
// configurations (key <stream>.<group>) and the priority group of the
// members' consumers.
const (
	StaticBucket  = "static-consumer-groups"
	ElasticBucket = "elastic-consumer-groups"
	PriorityGroup = "PCG"
)

// Member timers derive from the consumer's AckWait (DefaultAckWait when
// zero): the pin is held for max(AckWait, 2 s) without a pull, pulls expire
// after half of that, an elastic member's consumer is removed after AckWait
// without activity. orbit.go holds the pin for max(AckWait, 1 s) with pulls
// of max(AckWait/2, 1 s), which the pin outlives only from an AckWait of
// 2 s: below, its pin flaps between instances. From 2 s on both clients
// configure the member consumers alike; a group served by both should use
// an AckWait of 2 s or more.
const (
	DefaultAckWait = 5 * time.Second
	minPinnedTTL   = 2 * time.Second
)

// ErrInvalidConfig: a group configuration breaks a rule (see StaticConfig
// and ElasticConfig); what it breaks follows in the message.
var ErrInvalidConfig = errors.New("pcgroup: invalid group configuration")

// ErrGroupNotFound: no group of that kind, stream and name (or no bucket
// of that kind yet).
var ErrGroupNotFound = errors.New("pcgroup: consumer group not found")

// ErrConfigMismatch: CreateStatic or CreateElastic found a group of that
// name with another configuration.
var ErrConfigMismatch = errors.New("pcgroup: a group of that name exists with another configuration")

// ErrNotMember: a static group's member name is not in its membership.
var ErrNotMember = errors.New("pcgroup: not a member of the static group")

// ErrConfigChanged: a static group's configuration changed while a member
// ran; the member ends with it (static groups are changed by recreating
// them).
var ErrConfigChanged = errors.New("pcgroup: static group configuration changed")

// ErrMappingsInUse: members cannot be added to or dropped from an elastic
// group that uses member mappings.
var ErrMappingsInUse = errors.New("pcgroup: the group uses member mappings")

// MemberMapping gives a member an explicit list of partitions.
type MemberMapping struct {
	Member     string `json:"member"`
	Partitions []int  `json:"partitions"`
}

// StaticConfig is a static group's configuration, stored as JSON in
// StaticBucket. The stream's subjects already begin with a partition
// number (a subject transform of the stream with {{partition(n,…)}}).
// Either Members (partitions spread over them) or MemberMappings is set,
// not both.
type StaticConfig struct {
	// MaxMembers is the number of partitions (≥ 1).
	MaxMembers uint `json:"max_members"`
	// Filters restrict the subjects consumed, after the partition token
	// (none: ">").
	Filters        []string        `json:"filters,omitempty"`
	Members        []string        `json:"members,omitempty"`
	MemberMappings []MemberMapping `json:"member_mappings,omitempty"`
}

// PartitioningFilter selects subjects of an elastic group's stream and
// says which of its "*" wildcards (counted from 1) make the partitioning
// key; none: the whole subject.
type PartitioningFilter struct {
	Filter                string `json:"filter"`
	PartitioningWildcards []int  `json:"partitioning_wildcards"`
}

// ElasticConfig is an elastic group's configuration, stored as JSON in
// ElasticBucket. Either Members or MemberMappings is set, not both; both
// may change while members run.
type ElasticConfig struct {
	// MaxMembers is the number of partitions (≥ 1).
	MaxMembers          uint                 `json:"max_members"`
	PartitioningFilters []PartitioningFilter `json:"partitioning_filters"`
	// MaxBufferedMsgs and MaxBufferedBytes bound the group's work-queue
	// stream (0: unlimited); when full, sourcing waits.
	MaxBufferedMsgs  int64           `json:"max_buffered_msg,omitempty"`
	MaxBufferedBytes int64           `json:"max_buffered_bytes,omitempty"`
	Members          []string        `json:"members,omitempty"`
	MemberMappings   []MemberMapping `json:"member_mappings,omitempty"`
}

// IsMember reports whether name is in the static group's membership.
func (c *StaticConfig) IsMember(name string) bool {
	return isMember(c.Members, c.MemberMappings, name)
}

// IsMember reports whether name is in the elastic group's membership.
func (c *ElasticConfig) IsMember(name string) bool {
	return isMember(c.Members, c.MemberMappings, name)
}

func isMember(members []string, mappings []MemberMapping, name string) bool {
	return slices.Contains(members, name) || slices.ContainsFunc(mappings, func(m MemberMapping) bool { return m.Member == name })
}

// key is the KV key of a group's configuration.
func key(stream, group string) string { return stream + "." + group }

// ElasticStreamName is the name of an elastic group's work-queue stream.
func ElasticStreamName(stream, group string) string { return stream + "-" + group }

// StaticConsumerName is the name of a static group member's consumer (on
// the group's stream); an elastic member's consumer is named as the member.
func StaticConsumerName(group, member string) string { return group + "-" + member }

// PartitionFilters returns the consumer filters of member: one per
// partition it owns, "<partition>.<filter>". Members are sorted and
// deduplicated, the first MaxMembers of them kept, and partitions dealt out
// in contiguous runs so that a change of membership moves few of them;
// with MemberMappings each mapped partition p gives "p.>".
func PartitionFilters(members []string, maxMembers uint, mappings []MemberMapping, member, filter string) []string {
	var out []string
	if len(members) > 0 {
		ms := slices.Clone(members)
		slices.Sort(ms)
		ms = slices.Compact(ms)
		if uint(len(ms)) > maxMembers {
			ms = ms[:maxMembers]
		}
		n := uint(len(ms))
		per := maxMembers / n
		for p := range maxMembers {
			var owner string
			if p < n*per {
				owner = ms[(p/per)%n]
			} else {
				owner = ms[(p-n*per)%n]
			}
			if owner == member {
				out = append(out, strconv.FormatUint(uint64(p), 10)+"."+filter)
			}
		}
		return out
	}
	for _, m := range mappings {
		if m.Member == member {
			for _, p := range m.Partitions {
				out = append(out, strconv.Itoa(p)+".>")
			}
		}
	}
	return out
}

// MemberFilters returns the consumer filters of member in the static group.
func (c *StaticConfig) MemberFilters(member string) []string {
	if len(c.Filters) == 0 {
		return PartitionFilters(c.Members, c.MaxMembers, c.MemberMappings, member, ">")
	}
	var out []string
	for _, f := range c.Filters {
		out = append(out, PartitionFilters(c.Members, c.MaxMembers, c.MemberMappings, member, f)...)
	}
	return out
}

// MemberFilters returns the consumer filters of member in the elastic group.
func (c *ElasticConfig) MemberFilters(member string) []string {
	if len(c.PartitioningFilters) == 0 {
		return PartitionFilters(c.Members, c.MaxMembers, c.MemberMappings, member, ">")
	}
	var out []string
	for _, f := range c.PartitioningFilters {
		out = append(out, PartitionFilters(c.Members, c.MaxMembers, c.MemberMappings, member, f.Filter)...)
	}
	return out
}

// Validate checks the rules of a static configuration.
func (c *StaticConfig) Validate() error {
	return validateMembership(c.MaxMembers, c.Members, c.MemberMappings)
}

// Validate checks the rules of an elastic configuration: those of the
// membership, and each filter has a "*" or ends with ">", and its
// partitioning wildcards are distinct indexes of its "*" tokens.
func (c *ElasticConfig) Validate() error {
	if err := validateMembership(c.MaxMembers, c.Members, c.MemberMappings); err != nil {
		return err
	}
	for _, pf := range c.PartitioningFilters {
		if pf.Filter == "" {
			return fmt.Errorf("%w: empty partitioning filter", ErrInvalidConfig)
		}
		toks := strings.Split(pf.Filter, ".")
		stars := 0
		for _, t := range toks {
			if t == "*" {
				stars++
			}
		}
		if stars == 0 && toks[len(toks)-1] != ">" {
			return fmt.Errorf("%w: filter %q has no * and does not end with >", ErrInvalidConfig, pf.Filter)
		}
		if len(pf.PartitioningWildcards) > stars {
			return fmt.Errorf("%w: filter %q: more partitioning wildcards than * tokens", ErrInvalidConfig, pf.Filter)
		}
		seen := map[int]bool{}
		for _, w := range pf.PartitioningWildcards {
			if seen[w] {
				return fmt.Errorf("%w: filter %q: partitioning wildcard %d repeated", ErrInvalidConfig, pf.Filter, w)
			}
			seen[w] = true
			if w < 1 || w > stars {
				return fmt.Errorf("%w: filter %q: partitioning wildcard %d not between 1 and %d", ErrInvalidConfig, pf.Filter, w, stars)
			}
		}
	}
	return nil
}

func validateMembership(maxMembers uint, members []string, mappings []MemberMapping) error {
	if maxMembers < 1 {
		return fmt.Errorf("%w: max members must be at least 1", ErrInvalidConfig)
	}
	if len(members) > 0 && len(mappings) > 0 {
		return fmt.Errorf("%w: members and member mappings both given", ErrInvalidConfig)
	}
	if len(mappings) == 0 {
		return nil
	}
	if len(mappings) > int(maxMembers) {
		return fmt.Errorf("%w: more member mappings than max members", ErrInvalidConfig)
	}
	names := map[string]bool{}
	parts := map[int]bool{}
	for _, m := range mappings {
		if names[m.Member] {
			return fmt.Errorf("%w: member %q mapped twice", ErrInvalidConfig, m.Member)
		}
		names[m.Member] = true
		for _, p := range m.Partitions {
			if parts[p] {
				return fmt.Errorf("%w: partition %d mapped twice", ErrInvalidConfig, p)
			}
			parts[p] = true
			if p < 0 || p >= int(maxMembers) {
				return fmt.Errorf("%w: partition %d not between 0 and %d", ErrInvalidConfig, p, maxMembers-1)
			}
		}
	}
	if len(parts) != int(maxMembers) {
		return fmt.Errorf("%w: %d partitions mapped, want all %d", ErrInvalidConfig, len(parts), maxMembers)
	}
	return nil
}

// transformDest is the subject transform destination that inserts the
// partition number in front of subjects matching pf.
func transformDest(pf PartitioningFilter, maxMembers uint) string {
	toks := strings.Split(pf.Filter, ".")
	n := 1
	for i, t := range toks {
		if t == "*" {
			toks[i] = "{{Wildcard(" + strconv.Itoa(n) + ")}}"
			n++
		}
	}
	dest := strings.Join(toks, ".")
	if len(pf.PartitioningWildcards) == 0 {
		return "{{Partition(" + strconv.FormatUint(uint64(maxMembers), 10) + ")}}." + dest
	}
	ws := make([]string, len(pf.PartitioningWildcards))
	for i, w := range pf.PartitioningWildcards {
		ws[i] = strconv.Itoa(w)
	}
	return "{{Partition(" + strconv.FormatUint(uint64(maxMembers), 10) + "," + strings.Join(ws, ",") + ")}}." + dest
}

// StripPartition returns subject without its leading partition token.
func StripPartition(subject string) string {
	if i := strings.IndexByte(subject, '.'); i >= 0 {
		return subject[i+1:]
	}
	return subject
}
