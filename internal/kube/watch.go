package kube

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// Watcher opens a watch on the objects a wait depends on.
type Watcher func(ctx context.Context) (watch.Interface, error)

// WaitFor calls cond at once, again whenever a watched object changes, and at least every interval, until it
// returns true, an error, or ctx (bounded by timeout) ends. A change is seen the moment the API server sends
// it instead of up to an interval later; the interval covers a watch that cannot be opened yet (an API server
// still starting) or that ended. Changes that arrive while cond runs are coalesced into one more call.
func WaitFor(ctx context.Context, interval, timeout time.Duration, watches []Watcher, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	changed := make(chan struct{}, 1)
	for _, w := range watches {
		go follow(ctx, w, interval, changed)
	}
	for {
		if ok, err := cond(ctx); err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-time.After(interval):
		}
	}
}

// follow signals changed for every event of w's watches, reopening a watch that ends, until ctx ends.
func follow(ctx context.Context, w Watcher, interval time.Duration, changed chan<- struct{}) {
	for ctx.Err() == nil {
		if wi, err := w(ctx); err == nil {
			stop := context.AfterFunc(ctx, wi.Stop)
			for range wi.ResultChan() {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
			stop()
			wi.Stop()
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}
