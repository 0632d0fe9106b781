package proto

import "strings"

// Map returns h as a map of each key to its values, in the order they
// come in h: the shape of nats.go's nats.Header (map[string][]string),
// which HeaderOf turns back into a Header. Keys keep their case. The
// strings are copies: the map shares no memory with h or with a received
// message. The status line of a received header is not a field and is
// left out (see Status). A nil or empty h gives an empty, non-nil map.
func (h *Header) Map() map[string][]string {
	m := make(map[string][]string)
	if h == nil {
		return m
	}
	for k, v := range h.All() {
		k = strings.Clone(k)
		m[k] = append(m[k], strings.Clone(v))
	}
	return m
}
