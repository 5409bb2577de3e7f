package grader

import (
	"context"
	"sync"
	"time"
)

// Settling rounds: a fix holds when every check passes this many rounds in a row.
const (
	settleEvery = 500 * time.Millisecond
	holdRounds  = 3
)

// settle evaluates every check of q together until all hold, a collateral check has stayed broken while every
// task check holds (a learner's change that will not undo itself), or q.Settle runs out: the waits of
// independent checks overlap instead of adding up. Every round runs to its end, so even a zero wait judges each check on a whole evaluation, not on
// a context that expired before a slow host answered. It also returns how long each check's slowest
// evaluation took.
func settle(ctx context.Context, env Env, q Question) ([]Result, []time.Duration) {
	deadline := time.Now().Add(q.Settle)
	results := make([]Result, len(q.Checks))
	took := make([]time.Duration, len(q.Checks))
	passing, collateralBroken := 0, 0
	for {
		var wg sync.WaitGroup
		for i, p := range q.Checks {
			wg.Go(func() {
				start := time.Now()
				results[i] = Evaluate(ctx, env, p.Check)
				took[i] = max(took[i], time.Since(start))
			})
		}
		wg.Wait()
		// A collateral check also fails while a fixed workload is still rolling out (a Service without Ready
		// endpoints yet), so it only ends the wait once the task's own checks have converged.
		all, task, broken := true, true, false
		for i, r := range results {
			all = all && r.OK
			if q.Checks[i].Group == GroupCollateral {
				broken = broken || !r.OK
			} else {
				task = task && r.OK
			}
		}
		broken = broken && task
		passing, collateralBroken = count(all, passing), count(broken, collateralBroken)
		if passing >= holdRounds || collateralBroken >= holdRounds || time.Now().Add(settleEvery).After(deadline) {
			return results, took
		}
		select {
		case <-ctx.Done():
			return results, took
		case <-time.After(settleEvery):
		}
	}
}

func count(ok bool, n int) int {
	if ok {
		return n + 1
	}
	return 0
}
