package pull

import (
	"strings"

	"github.com/natsio/natsio/conn"
)

// headerPinID is the header carrying the pin of a pinned_client group.
const headerPinID = "Nats-Pin-Id"

// pin returns the pin id known for group.
func (c *Consumer) pin(group string) string {
	if group == "" {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pins[group]
}

func (c *Consumer) setPin(group, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pins == nil {
		c.pins = make(map[string]string)
	}
	c.pins[group] = id
}

// notePin records the pin id stamped on m, if the consumer is pinned.
func (c *Consumer) notePin(group string, m *conn.Msg) {
	if group == "" || m.Header.IsZero() {
		return
	}
	v, ok := m.Header.Lookup(headerPinID)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pins[group] != v {
		if c.pins == nil {
			c.pins = make(map[string]string)
		}
		c.pins[group] = strings.Clone(v) // v is a view of m
	}
}
