package kube

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

func TestWaitForWakesOnAChange(t *testing.T) {
	fw := watch.NewFake()
	var ready atomic.Bool
	go func() {
		time.Sleep(50 * time.Millisecond)
		ready.Store(true)
		fw.Modify(nil)
	}()
	// The interval is an hour: only the change can end this wait before its timeout.
	err := WaitFor(context.Background(), time.Hour, 10*time.Second,
		[]Watcher{func(context.Context) (watch.Interface, error) { return fw, nil }},
		func(context.Context) (bool, error) { return ready.Load(), nil })
	if err != nil {
		t.Fatalf("the change did not wake the wait: %v", err)
	}
}

func TestWaitForPollsWhenTheWatchCannotOpen(t *testing.T) {
	var calls atomic.Int32
	err := WaitFor(context.Background(), 10*time.Millisecond, 10*time.Second,
		[]Watcher{func(context.Context) (watch.Interface, error) { return nil, errors.New("connection refused") }},
		func(context.Context) (bool, error) { return calls.Add(1) >= 3, nil })
	if err != nil || calls.Load() != 3 {
		t.Errorf("err %v after %d calls, want nil after 3", err, calls.Load())
	}
}

func TestWaitForTimesOut(t *testing.T) {
	err := WaitFor(context.Background(), 10*time.Millisecond, 50*time.Millisecond, nil,
		func(context.Context) (bool, error) { return false, nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want a deadline", err)
	}
}
