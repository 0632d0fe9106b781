package pcgroup

import (
	"strings"

	"github.com/natsio/natsio/deadletter"
)

// DeadLetters returns the deadletter.Config that moves the dead letters of
// a group's members: the consumers on the group's stream, for a static group
// only those named "<group>-<member>". Set its Subject (and the like) and
// pass it to deadletter.Start before members run. The letters name the
// consumer stream: "<stream>-<group>" for an elastic group, whose letters
// then carry the partition token in Dead-Letter-Subject.
func DeadLetters(k Kind, stream, group string) deadletter.Config {
	if k == Elastic {
		return deadletter.Config{Stream: ElasticStreamName(stream, group), Consumer: "*"}
	}
	prefix := group + "-"
	return deadletter.Config{Stream: stream, Consumer: "*", Name: "DL_" + stream + "_" + group,
		Filter: func(a *deadletter.Advisory) bool { return strings.HasPrefix(a.Consumer, prefix) }}
}
