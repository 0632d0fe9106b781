package objstore_test

import (
	"iter"
	"time"

	"github.com/natsio/natsio/objstore"
)

// pull turns a watch into a next function that gives up after 10 s.
func pull(seq iter.Seq2[*objstore.Info, error]) (func() (*objstore.Info, error, bool), func()) {
	type item struct {
		info *objstore.Info
		err  error
	}
	ch := make(chan item, 256)
	done := make(chan struct{})
	quit := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		for info, err := range seq {
			select {
			case ch <- item{info, err}:
			case <-quit:
				return
			}
		}
	}()
	next := func() (*objstore.Info, error, bool) {
		select {
		case it, ok := <-ch:
			return it.info, it.err, ok
		case <-time.After(10 * time.Second):
			panic("watch: nothing within 10s")
		}
	}
	return next, func() { close(quit) }
}
