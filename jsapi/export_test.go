package jsapi

// AssumeRemoteLevel makes js take the server answering its requests to
// be at API level lvl, as a JS behind a domain does after $JS.API.INFO,
// so that a test can reach the server's own refusal of a level.
func AssumeRemoteLevel(js *JS, lvl int32) {
	js.remote = true
	js.remoteLevel.Store(lvl)
}

// SetFeatureLevel changes the API level f needs until restore is called.
// Tests using it must not run in parallel with others.
func SetFeatureLevel(f Feature, lvl int32) (restore func()) {
	old := features[f].level
	features[f].level = lvl
	return func() { features[f].level = old }
}

// NewMsg wraps a message delivered on nc for a consumer, as a consumer
// does.
var NewMsg = newMsg
