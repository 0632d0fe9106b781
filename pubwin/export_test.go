package pubwin

// RetryWaiting reports how many of w's messages wait for a retry: their
// timers are armed.
func RetryWaiting(w *Window) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, f := range w.pending.ring {
		if f != nil && f.waiting {
			n++
		}
	}
	for _, f := range w.pending.overflow {
		if f.waiting {
			n++
		}
	}
	return n
}
