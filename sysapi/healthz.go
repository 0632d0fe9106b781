package sysapi

// HealthzOptions are the options of a HEALTHZ request. The zero value
// checks the server and, when it runs JetStream, its JetStream assets.
type HealthzOptions struct {
	Filter
	// JSEnabledOnly fails only when JetStream is off; JSServerOnly checks
	// the server's JetStream but not the meta group and assets;
	// JSMetaOnly checks the meta group only.
	JSEnabled     bool   `json:"js-enabled,omitempty"`
	JSEnabledOnly bool   `json:"js-enabled-only,omitempty"`
	JSServerOnly  bool   `json:"js-server-only,omitempty"`
	JSMetaOnly    bool   `json:"js-meta-only,omitempty"`
	Account       string `json:"account,omitempty"`
	Stream        string `json:"stream,omitempty"`
	Consumer      string `json:"consumer,omitempty"`
	// Details lists every failure in Errors instead of the first.
	Details bool `json:"details,omitempty"`
}

// Healthz is a server's health (/healthz): Status "ok" or "unavailable"
// (or "error"), with the reasons.
type Healthz struct {
	Status     string         `json:"status"`
	StatusCode int            `json:"status_code,omitempty"`
	Error      string         `json:"error,omitempty"`
	Errors     []HealthzError `json:"errors,omitempty"`
}

// HealthzError is one failed check of Healthz.
type HealthzError struct {
	Type     string `json:"type"`
	Account  string `json:"account,omitempty"`
	Stream   string `json:"stream,omitempty"`
	Consumer string `json:"consumer,omitempty"`
	Error    string `json:"error,omitempty"`
}
