package pull

import "time"

// SetFetchSubIdle sets how long a kept fetch subscription waits for the
// next Fetch, for the tests of one package run (not concurrent ones).
func SetFetchSubIdle(d time.Duration) (restore func()) {
	old := fetchSubIdle
	fetchSubIdle = d
	return func() { fetchSubIdle = old }
}
