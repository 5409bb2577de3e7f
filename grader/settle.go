package grader

import (
	"context"
	"sync"
	"time"
)

// Settling rounds: a fix holds when every check passes this many rounds in a row. Rounds start settleEvery
// apart (or right after a slower round), so a check that execs on a node does not stretch the hold.
const (
	settleEvery = 500 * time.Millisecond
	holdRounds  = 3
	// collateralHold is how long a collateral check must stay broken, on top of holdRounds, before it ends
	// the wait: right after a kubelet restart, exec through it fails for a few seconds on a correct fix too.
	collateralHold = 10 * time.Second
)

// settle evaluates every check of q together until all hold, a collateral check has stayed broken while every
// task check holds (a learner's change that will not undo itself), a decisive check keeps failing, or q.Settle
// runs out: the waits of independent checks overlap instead of adding up. Every round runs to its end, so even
// a zero wait judges each check on a whole evaluation, not on a context that expired before a slow host
// answered. It also returns how long each check's slowest evaluation took, and whether every check held.
func settle(ctx context.Context, env Env, q Question) (results []Result, took []time.Duration, held bool) {
	deadline := time.Now().Add(q.Settle)
	results = make([]Result, len(q.Checks))
	took = make([]time.Duration, len(q.Checks))
	var s settling
	for {
		roundStart := time.Now()
		var wg sync.WaitGroup
		for i, p := range q.Checks {
			wg.Go(func() {
				start := time.Now()
				results[i] = Evaluate(ctx, env, p.Check)
				took[i] = max(took[i], time.Since(start))
			})
		}
		wg.Wait()
		next := roundStart.Add(settleEvery)
		if s.done(q.Checks, results, time.Now()) || next.After(deadline) {
			return results, took, s.passing >= holdRounds
		}
		select {
		case <-ctx.Done():
			return results, took, false
		case <-time.After(time.Until(next)):
		}
	}
}

// settling counts, round after round, how long each way of ending the wait has held.
type settling struct {
	passing, collateral, decisive int
	collateralSince               time.Time
}

// done takes one round's results and reports whether the grade is settled.
func (s *settling) done(checks []Planned, results []Result, now time.Time) bool {
	all, task, broken, decisive := true, true, false, false
	for i, r := range results {
		all = all && r.OK
		switch {
		case checks[i].Group == GroupCollateral:
			broken = broken || !r.OK
		default:
			task = task && r.OK
		}
		decisive = decisive || (checks[i].Check.Decisive && !r.OK)
	}
	// A collateral check also fails while a fixed workload is still rolling out (a Service without Ready
	// endpoints yet), so it only ends the wait once the task's own checks have converged.
	broken = broken && task
	s.passing, s.collateral, s.decisive = count(all, s.passing), count(broken, s.collateral), count(decisive, s.decisive)
	if s.collateral == 1 {
		s.collateralSince = now
	}
	return s.passing >= holdRounds || s.decisive >= holdRounds ||
		(s.collateral >= holdRounds && now.Sub(s.collateralSince) >= collateralHold)
}

func count(ok bool, n int) int {
	if ok {
		return n + 1
	}
	return 0
}
