package grader

import (
	"context"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Settling rounds: a fix holds when every check passes this many rounds in a row, and a failing verdict is
// given when the check results have not changed for as many rounds while the cluster has converged. Rounds
// start settleEvery apart (or right after a slower round), so a check that execs on a node does not stretch
// the hold.
const (
	settleEvery = 500 * time.Millisecond
	holdRounds  = 3
	// collateralHold is how long a collateral check must stay broken, on top of holdRounds, before it ends
	// the wait: right after a kubelet restart, exec through it fails for a few seconds on a correct fix too.
	collateralHold = 10 * time.Second
	// roundLimit bounds one round's evaluation of the checks: an API server that accepts connections but
	// cannot reach etcd holds every request until lab's request timeout, and three such rounds stretched a
	// decisive verdict to minutes. A check without an answer within it fails that round, saying so.
	roundLimit = 15 * time.Second
)

// Settled is how a question's wait ended, for the learner and for `lab check -o json`.
type Settled struct {
	// Waited is how long the checks were evaluated before the verdict.
	Waited Seconds `json:"waited"`
	// Converged is true when the verdict came from a converged cluster (or every check holding), false when
	// the settle window ran out first.
	Converged bool `json:"converged"`
	// Reason says what ended the wait: "every check holds", "converged", "decisive", "collateral", "window".
	Reason string `json:"reason"`
	// WaitingFor is what the cluster was still doing when the window ran out (empty otherwise).
	WaitingFor []string `json:"waitingFor,omitempty"`
	// Waits is what grading waited for on the way, longest first.
	Waits []Wait `json:"waits,omitempty"`
}

// Wait is how long grading waited for one object, and the last state it waited in.
type Wait struct {
	For     string  `json:"for"`
	Seconds Seconds `json:"seconds"`
	Last    string  `json:"last"`
}

// waits sums, round after round, how long each object was waited for.
type waits struct {
	order []string
	by    map[string]*Wait
	last  time.Time
}

// add counts the time since the previous round for everything w still waits for.
func (ws *waits) add(w []Waiting, now time.Time) {
	if ws.by == nil {
		ws.by = map[string]*Wait{}
	}
	d := Seconds(0)
	if !ws.last.IsZero() {
		d = Seconds(now.Sub(ws.last).Seconds())
	}
	ws.last = now
	for _, x := range w {
		subject, _, _ := strings.Cut(x.What, ": ")
		if ws.by[subject] == nil {
			ws.by[subject] = &Wait{For: subject}
			ws.order = append(ws.order, subject)
		}
		ws.by[subject].Seconds += d
		ws.by[subject].Last = x.What
	}
}

func (ws *waits) list() []Wait {
	var out []Wait
	for _, k := range ws.order {
		w := *ws.by[k]
		w.Seconds = Seconds(math.Round(float64(w.Seconds)*10) / 10)
		out = append(out, w)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seconds > out[j].Seconds })
	return out
}

// Seconds marshals a duration as seconds.
type Seconds float64

// Progress is one round's state while a question settles, for the live line.
type Progress struct {
	Question   string   `json:"question"`
	Passing    int      `json:"passing"`
	Checks     int      `json:"checks"`
	WaitingFor []string `json:"waitingFor,omitempty"`
	Elapsed    Seconds  `json:"elapsed"`
}

// settle evaluates every check of q together, round after round, until the verdict is clear: every check
// holds; or the cluster has converged (see converge.go) and the results have stopped changing; or a
// collateral check has stayed broken while every task check holds; or a decisive check keeps failing; or
// q.Settle runs out. Every round runs to its end, so even a zero wait judges each check on a whole
// evaluation. It also returns how long each check's slowest evaluation took.
func settle(ctx context.Context, env Env, q Question, report func(Progress)) (results []Result, took []time.Duration, st Settled) {
	start := time.Now()
	deadline := start.Add(q.Settle)
	results = make([]Result, len(q.Checks))
	took = make([]time.Duration, len(q.Checks))
	t := targetsOf(q)
	var s settling
	var conv convergence
	var waited waits
	for {
		roundStart := time.Now()
		rctx, cancel := context.WithTimeout(ctx, roundLimit)
		var wg sync.WaitGroup
		for i, p := range q.Checks {
			wg.Go(func() {
				began := time.Now()
				results[i] = Evaluate(rctx, env, p.Check)
				took[i] = max(took[i], time.Since(began))
			})
		}
		var w []Waiting
		if checksTouch(t) {
			wg.Go(func() {
				v, err := env.observe(ctx, t, start, env.probeNode)
				if err != nil {
					w = []Waiting{{Key: "api", What: "cannot read the cluster yet: " + err.Error()}}
					return
				}
				conv.remember(v)
				w = v.waiting(start, time.Now())
			})
		}
		wg.Wait()
		cancel()
		now := time.Now()
		w = conv.still(w, now)
		waited.add(w, now)
		if report != nil {
			report(progressOf(q, results, w, now.Sub(start)))
		}
		next := roundStart.Add(settleEvery)
		reason := s.done(q.Checks, results, now)
		quiet := len(w) == 0
		if reason == "" && s.converged(results, quiet, now.Sub(start)) {
			reason = "converged"
		}
		if reason == "" && s.collateral >= holdRounds && s.quiet >= holdRounds && !brokenThroughWorkloads(q.Checks, results) {
			// An over-broad fix judged from objects alone (a binding, a field, an object that must stay) needs
			// no collateralHold once the cluster is quiet: only checks that reach a workload can still be
			// recovering from a restart.
			reason = "collateral"
		}
		if reason != "" {
			return results, took, Settled{Waited: Seconds(now.Sub(start).Seconds()), Converged: true, Reason: reason, Waits: waited.list()}
		}
		if next.After(deadline) {
			st := Settled{Waited: Seconds(now.Sub(start).Seconds()), Reason: "window", Waits: waited.list()}
			for _, x := range w {
				st.WaitingFor = append(st.WaitingFor, x.What)
			}
			return results, took, st
		}
		select {
		case <-ctx.Done():
			return results, took, Settled{Waited: Seconds(time.Since(start).Seconds()), Reason: "interrupted", Waits: waited.list()}
		case <-time.After(time.Until(next)):
		}
	}
}

func progressOf(q Question, results []Result, w []Waiting, elapsed time.Duration) Progress {
	p := Progress{Question: q.ID, Checks: len(results), Elapsed: Seconds(elapsed.Seconds())}
	for _, r := range results {
		if r.OK {
			p.Passing++
		}
	}
	for _, x := range w {
		p.WaitingFor = append(p.WaitingFor, x.What)
	}
	return p
}

// settling counts, round after round, how long each way of ending the wait has held.
type settling struct {
	passing, collateral, decisive int
	collateralSince               time.Time
	// unchanged counts rounds whose pass/fail results equal the round before, quiet rounds in a row with
	// nothing left to wait for.
	unchanged, quiet int
	last             []bool
}

// done takes one round's results and says what settled the grade, or "".
func (s *settling) done(checks []Planned, results []Result, now time.Time) string {
	all, task, broken, decisive := true, true, false, false
	for i, r := range results {
		all = all && r.OK
		if checks[i].Group == GroupCollateral {
			broken = broken || !r.OK
		} else {
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
	switch {
	case s.passing >= holdRounds:
		return "every check holds"
	case s.decisive >= holdRounds:
		return "decisive"
	case s.collateral >= holdRounds && now.Sub(s.collateralSince) >= collateralHold:
		return "collateral"
	}
	return ""
}

// converged takes one round's results and whether the cluster had nothing left to wait for, and says whether
// a failing verdict can be given: both have held for holdRounds rounds, and minFail has passed.
func (s *settling) converged(results []Result, quiet bool, elapsed time.Duration) bool {
	ok := make([]bool, len(results))
	for i, r := range results {
		ok[i] = r.OK
	}
	s.unchanged = count(s.last != nil && slices.Equal(ok, s.last), s.unchanged)
	s.last = ok
	s.quiet = count(quiet, s.quiet)
	// A collateral check broken while the task holds has its own, longer rule above.
	return s.unchanged >= holdRounds-1 && s.quiet >= holdRounds && elapsed >= minFail && s.collateral == 0
}

// brokenThroughWorkloads says whether a failing collateral check reaches a running workload (exec in a Pod
// or a node, HTTP, endpoints, Pods Ready, a custom check, an admission probe the API server could not send to
// its webhook): those fail for a few seconds right after a kubelet restart or a replaced Pod even on a correct
// fix (the webhook's new Pod is Ready a moment before its Service routes to it), so they keep collateralHold.
func brokenThroughWorkloads(checks []Planned, results []Result) bool {
	for i, r := range results {
		if r.OK || checks[i].Group != GroupCollateral {
			continue
		}
		if evaluators[reflect.TypeOf(checks[i].Check.Spec())].workload || r.viaWebhook {
			return true
		}
	}
	return false
}

func count(ok bool, n int) int {
	if ok {
		return n + 1
	}
	return 0
}
