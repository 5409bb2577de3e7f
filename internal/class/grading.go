package class

import (
	"context"
	"strings"
	"sync"
	"time"
)

// GradeTimeout bounds the server's grading of one learner's namespace: a few checks, each read from the API
// server, with a short wait for a rollout the learner's own check saw settle.
const GradeTimeout = 2 * time.Minute

// maxGrading bounds how many namespaces the server grades at once, so a room checking together queues on
// the instructor's machine instead of flooding the shared cluster.
const maxGrading = 4

// grading runs the server's own grading of learners' namespaces, one at a time per learner: a check that
// arrives while that learner is being graded is kept (the latest only) and graded next.
type grading struct {
	mu      sync.Mutex
	running map[string]bool
	next    map[string]Result
	slots   chan struct{}
	wg      sync.WaitGroup
	// stop ends every grading when the server stops.
	stop     chan struct{}
	stopOnce sync.Once
}

func newGrading() *grading {
	return &grading{running: map[string]bool{}, next: map[string]Result{}, slots: make(chan struct{}, maxGrading), stop: make(chan struct{})}
}

// stopAll ends the gradings under way and waits for them.
func (g *grading) stopAll() {
	// Closing under the lock orders it after every gradeLater that started one, so none starts after Wait.
	g.mu.Lock()
	g.stopOnce.Do(func() { close(g.stop) })
	g.mu.Unlock()
	g.wg.Wait()
}

// gradeLater queues the server's grading of what a learner's check asked about. The learner's own verdict is
// not kept: only the time used and the hints taken, which the server cannot see, come from the learner. The
// grading outlives the request that asked for it, and ends when the server stops.
func (s *Server) gradeLater(reqCtx context.Context, namespace string, asked Result) {
	g := s.grading
	id := strings.ToLower(asked.Learner)
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.stop:
		return
	default:
	}
	if g.running[id] {
		g.next[id] = asked
		return
	}
	g.running[id] = true
	ctx, cancel := context.WithCancel(context.WithoutCancel(reqCtx))
	g.wg.Go(func() {
		defer cancel()
		go func() {
			select {
			case <-g.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		for {
			s.grade(ctx, namespace, asked)
			g.mu.Lock()
			queued, more := g.next[id]
			delete(g.next, id)
			if !more || ctx.Err() != nil {
				delete(g.running, id)
				g.mu.Unlock()
				return
			}
			g.mu.Unlock()
			asked = queued
		}
	})
}

// grade grades one learner's namespace and records the result as the server's. A namespace that cannot be
// graded (the cluster is down) records nothing: the instructor reads why in the server's log.
func (s *Server) grade(ctx context.Context, namespace string, asked Result) {
	select {
	case s.grading.slots <- struct{}{}:
		defer func() { <-s.grading.slots }()
	case <-ctx.Done():
		return
	}
	ctx, cancel := context.WithTimeout(ctx, GradeTimeout)
	defer cancel()
	checks, err := s.shared.Grade(ctx, namespace, asked.Scenario, s.Plan().Seed)
	if err != nil {
		s.log.Printf("could not grade %s's %s in namespace %s: %v", asked.Learner, asked.Scenario, namespace, err)
		return
	}
	res := Result{Learner: asked.Learner, Scenario: asked.Scenario, Event: EventCheck, Source: SourceServer, Checks: checks,
		TimeUsed: asked.TimeUsed, HintsTaken: asked.HintsTaken, Passed: true, At: time.Now()}
	for _, c := range checks {
		res.ChecksTotal++
		res.MaxScore += c.Points
		if c.Passed {
			res.ChecksPassed++
			res.Score += c.Points
		} else {
			res.Passed = false
		}
	}
	if _, err := s.record(res, ""); err != nil {
		s.log.Printf("could not record the grade of %s's %s: %v", asked.Learner, asked.Scenario, err)
		return
	}
	s.events.notify()
}
