// Package session runs a learner's attempt at a scenario on a lab cluster: start (reset, set up, inject, wait
// for the symptom), check (grade in a child process), and reset (revert the ledger, sweep back to the
// baseline, and prove it).
package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/injector"
	"github.com/cka-lab/lab/internal/baseline"
	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/state"
	"github.com/cka-lab/lab/internal/ui"
	"github.com/cka-lab/lab/scenarios"
)

// Files of the session in the cluster's state directory.
const (
	attemptFile  = "attempt.json"
	ledgerFile   = "ledger.json"
	baselineFile = "baseline.json"
	// taskStartFile is the cluster as the task was shown; faultChangesFile what the faults changed.
	taskStartFile    = "task-start.json"
	faultChangesFile = "fault-changes.json"
)

// Phase is where an attempt or an exam stands: a start left "starting" was interrupted, a "failed" one says why
// in its Error.
type Phase string

// Phases of an attempt and of an exam.
const (
	PhaseStarting Phase = "starting"
	PhaseActive   Phase = "active"
	PhaseFailed   Phase = "failed"
)

// Attempt is the scenario in progress on a cluster.
type Attempt struct {
	Scenario string            `json:"scenario"`
	Seed     int64             `json:"seed"`
	Values   map[string]string `json:"values"`
	Phase    Phase             `json:"phase"`
	Error    string            `json:"error,omitempty"`
	Created  time.Time         `json:"created"`
	// Started is when the task was shown: the clock runs from here.
	Started time.Time `json:"started,omitempty"`
	// Hints taken, whether the solution was shown, and the last grade: the attempt's history, written after
	// grading and never read by it.
	Hints       int        `json:"hints"`
	SawSolution bool       `json:"sawSolution"`
	LastCheck   *CheckNote `json:"lastCheck,omitempty"`
	Diagnosis   *Diagnosis `json:"diagnosis,omitempty"`
}

// Diagnosis is the learner's answer to "where did the Pod stop?", given before fixing.
type Diagnosis struct {
	At      time.Time     `json:"at"`
	Stage   journey.Stage `json:"stage"`
	Object  string        `json:"object,omitempty"`
	Correct bool          `json:"correct"`
}

// String is the answer as the learner gave it: the stage, then the object when one was named.
func (d Diagnosis) String() string { return strings.TrimSpace(string(d.Stage) + " " + d.Object) }

// CheckNote is what the attempt keeps of a grade.
type CheckNote struct {
	At     time.Time `json:"at"`
	Passed bool      `json:"passed"`
	Score  int       `json:"score"`
	Max    int       `json:"max"`
}

// Save writes the attempt back.
func (s *Session) Save(a *Attempt) error { return s.Store.Write(s.Cluster.Name, attemptFile, a) }

// Session acts on one lab cluster.
type Session struct {
	Cluster *cluster.Cluster
	Store   *state.Store
	Status  *ui.Status
	// Self is the running lab binary (the webhook image and the grader's child process).
	Self string
	// Provider creates and deletes the clusters an exam needs beside this one; nil where lab makes none.
	Provider *cluster.Provider
	// Grade grades a plan for this session's cluster, writing its reports into dir; nil grades in a child
	// process of Self (grader.RunChild), as lab always does. Tests give a fake grader: the child is the lab
	// binary, which a unit test does not have.
	Grade func(ctx context.Context, plan grader.Plan, dir string, onProgress func(grader.Progress)) (*grader.Outcome, error)
}

// grade grades plan with Grade, else in a child process pointed at this session's cluster.
func (s *Session) grade(ctx context.Context, plan grader.Plan, dir string, onProgress func(grader.Progress)) (*grader.Outcome, error) {
	if s.Grade != nil {
		return s.Grade(ctx, plan, dir, onProgress)
	}
	return grader.RunChild(ctx, s.Self, plan, dir, []string{"LAB_CLUSTER=" + s.Cluster.Name}, onProgress)
}

func (s *Session) env() injector.Env {
	return injector.Env{Clients: s.Cluster.Clients, Nodes: s.Cluster.Nodes, Self: s.Self, SecretsDir: s.secretsDir()}
}

func (s *Session) secretsDir() string { return s.Store.Path(s.Cluster.Name, "secrets") }

func (s *Session) injector() (*injector.Injector, error) {
	l, err := injector.OpenLedger(s.Store.Path(s.Cluster.Name, ledgerFile))
	if err != nil {
		return nil, err
	}
	return injector.New(s.env(), l), nil
}

// Current returns the attempt in progress, nil when there is none. What is graded (scenario, seed, values)
// comes from the cluster's record; the local file adds the learner's history (hints, times).
func (s *Session) Current(ctx context.Context) (*Attempt, error) {
	var local Attempt
	err := s.Store.Read(s.Cluster.Name, attemptFile, &local)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, err
	}
	rec, recErr := s.readRecord(ctx)
	if errors.Is(recErr, errUnreachable) && err == nil {
		// The API server is down, as a control-plane scenario leaves it: the attempt this machine started is
		// the only record to be read, and every check still judges the cluster itself.
		return &local, nil
	}
	if recErr != nil {
		return nil, recErr
	}
	switch {
	case rec == nil && err != nil:
		return nil, nil
	case rec == nil:
		return &local, nil
	case err != nil:
		// The local file is gone (another machine's state, or deleted): the cluster still knows.
		rec.Phase = PhaseActive
		return rec, nil
	}
	local.Scenario, local.Seed, local.Values = rec.Scenario, rec.Seed, rec.Values
	return &local, nil
}

// Instance rebuilds the attempt's scenario instance from the catalogue and the recorded values.
func (s *Session) Instance(cat *scenarios.Catalog, a *Attempt) (*scenarios.Instance, error) {
	sc, err := cat.Get(a.Scenario)
	if err != nil {
		return nil, err
	}
	return sc.WithValues(a.Seed, a.Values)
}

// shownAt is when a task is shown: the start of the next whole second. The API server stores creation times in
// whole seconds, so an object the setup made and one a learner recreates right after the task appears would
// otherwise share one, and the grader could not tell them apart (CI run 40).
func shownAt(ctx context.Context) time.Time {
	next := time.Now().Truncate(time.Second).Add(time.Second)
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(next)):
	}
	return time.Now().UTC()
}

// SymptomTimeout is how long start waits for a symptom unless the scenario says otherwise.
const SymptomTimeout = 90 * time.Second

// Start resets whatever ran before, sets up the scenario for seed, injects its faults and waits until its
// symptom is observable. The attempt record is written before anything changes, so an interrupted start is
// visible to `lab status` and repaired by `lab reset`.
func (s *Session) Start(ctx context.Context, sc *scenarios.Scenario, seed int64) (*scenarios.Instance, error) {
	if err := injector.Preflight(ctx, sc.Faults); err != nil {
		return nil, fmt.Errorf("start %s: %w", sc.ID, err)
	}
	if err := s.resetIfNeeded(ctx); err != nil {
		return nil, err
	}
	if err := s.ensureBaseline(ctx); err != nil {
		return nil, err
	}
	inst, err := s.instantiate(ctx, sc, seed)
	if err != nil {
		return nil, err
	}
	a := &Attempt{Scenario: sc.ID, Seed: seed, Values: inst.Values, Phase: PhaseStarting, Created: time.Now().UTC()}
	if err := s.Store.Write(s.Cluster.Name, attemptFile, a); err != nil {
		return nil, err
	}
	if err := s.writeRecord(ctx, a); err != nil {
		return nil, err
	}
	if err := s.breakCluster(ctx, inst); err != nil {
		a.Phase, a.Error = PhaseFailed, err.Error()
		err = withFailureSaved(err, func() error { return s.Store.Write(s.Cluster.Name, attemptFile, a) })
		return nil, fmt.Errorf("start %s: %w (run `lab reset` to restore the cluster)", sc.ID, err)
	}
	a.Phase, a.Started = PhaseActive, shownAt(ctx)
	return inst, s.Store.Write(s.Cluster.Name, attemptFile, a)
}

func (s *Session) breakCluster(ctx context.Context, inst *scenarios.Instance) error {
	inj, err := s.injector()
	if err != nil {
		return err
	}
	if len(inst.Setup) > 0 {
		if err := s.Status.Step("Setting up the scenario", func() error {
			for _, m := range inst.Setup {
				if err := inj.Setup(ctx, m); err != nil {
					return fmt.Errorf("setup: %w", err)
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	beforeFaults, err := s.snapshot(ctx)
	if err != nil {
		return err
	}
	if err := s.forgetTaskStart(); err != nil {
		return err
	}
	for _, f := range inst.Faults {
		kind, _ := f.Kind()
		if err := s.Status.Step("Injecting the fault ("+kind+")", func() error { return inj.Inject(ctx, f) }); err != nil {
			return err
		}
	}
	timeout := SymptomTimeout
	if inst.SymptomTimeout.Duration > 0 {
		timeout = inst.SymptomTimeout.Duration
	}
	if err := s.Status.Step("Waiting until the symptom is observable", func() error {
		return s.waitSymptom(ctx, inst, timeout)
	}); err != nil {
		return err
	}
	return s.recordTaskStart(ctx, beforeFaults)
}

// snapshot records the cluster for the net-change guard; nil on a shared cluster, where a learner may not
// read what lies outside their namespaces, and grading has no guard.
func (s *Session) snapshot(ctx context.Context) (*baseline.Snapshot, error) {
	if s.Cluster.Shared() {
		return nil, nil
	}
	ns, err := s.Cluster.Nodes()
	if err != nil {
		return nil, err
	}
	snap, err := baseline.Take(ctx, s.Cluster.Clients, ns)
	if err != nil {
		return nil, fmt.Errorf("record the cluster for grading: %w", err)
	}
	return snap, nil
}

// recordTaskStart records the cluster as the task finds it, and what the faults changed on the way: grading
// fails any later net change the task does not involve, and undoing a fault is always involved.
func (s *Session) recordTaskStart(ctx context.Context, beforeFaults *baseline.Snapshot) error {
	if beforeFaults == nil {
		return nil
	}
	start, err := s.snapshot(ctx)
	if err != nil {
		// A control-plane fault's symptom is an API server that does not answer: the objects are as the
		// faults applied them, which their footprints name, and the nodes are read without it.
		if start, err = s.nodesSince(ctx, beforeFaults); err != nil {
			return err
		}
	}
	if err := s.Store.Write(s.Cluster.Name, taskStartFile, start); err != nil {
		return err
	}
	return s.Store.Write(s.Cluster.Name, faultChangesFile, baseline.Diff(beforeFaults, start))
}

// nodesSince is snap with the nodes' files and services read now.
func (s *Session) nodesSince(ctx context.Context, snap *baseline.Snapshot) (*baseline.Snapshot, error) {
	ns, err := s.Cluster.Nodes()
	if err != nil {
		return nil, err
	}
	out := *snap
	if out.Files, out.Units, err = baseline.ReadNodes(ctx, ns); err != nil {
		return nil, fmt.Errorf("record the nodes for grading: %w", err)
	}
	return &out, nil
}

// forgetTaskStart removes the previous task's start, which no later check may compare with.
func (s *Session) forgetTaskStart() error {
	for _, f := range []string{taskStartFile, faultChangesFile} {
		if err := s.Store.Remove(s.Cluster.Name, f); err != nil && !errors.Is(err, state.ErrNotFound) {
			return err
		}
	}
	return nil
}

// guard is the unchanged check for the attempt's task, nil when its start was not recorded (a shared cluster,
// an attempt started by an older lab).
func (s *Session) guard(inst *scenarios.Instance) *scenarios.Check {
	var changed []baseline.Residue
	if err := s.Store.Read(s.Cluster.Name, faultChangesFile, &changed); err != nil {
		return nil
	}
	path := s.Store.Path(s.Cluster.Name, taskStartFile)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	scope := inst.Scope()
	for _, r := range changed {
		if r.Kind == "" {
			scope.AddInside(r.Node)
		} else {
			scope.AddChanged(r.Kind, r.Namespace, r.Name)
		}
	}
	return &scenarios.Check{Name: scenarios.UnchangedName, Points: 1, Unchanged: &scenarios.UnchangedCheck{Since: path, Scope: scope.Normalized()}}
}

// waitSymptom waits until every symptom check holds: the learner must see the fault the way the exam shows it.
func (s *Session) waitSymptom(ctx context.Context, inst *scenarios.Instance, timeout time.Duration) error {
	env := grader.Env{Clients: s.Cluster.Clients, Nodes: s.Cluster.Nodes, Stage: inst.Stage}
	deadline := time.Now().Add(timeout)
	for {
		var failing *grader.Result
		var name string
		for _, c := range inst.Symptom {
			if r := grader.Evaluate(ctx, env, c); !r.OK {
				failing, name = &r, c.Name
				break
			}
		}
		if failing == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the symptom %q did not appear within %s: %s", name, timeout, failing.Evidence)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (s *Session) ensureBaseline(ctx context.Context) error {
	// A shared cluster has no baseline of lab's: reset there deletes what the attempt created, nothing more.
	if s.Cluster.Shared() {
		return nil
	}
	var b baseline.Snapshot
	err := s.Store.Read(s.Cluster.Name, baselineFile, &b)
	if err == nil || !errors.Is(err, state.ErrNotFound) {
		return err
	}
	return s.Status.Step("Recording the cluster's baseline", func() error { return s.TakeBaseline(ctx) })
}

// TakeBaseline records the cluster as it is now as the state every reset returns to.
func (s *Session) TakeBaseline(ctx context.Context) error {
	ns, err := s.Cluster.Nodes()
	if err != nil {
		return err
	}
	b, err := baseline.Take(ctx, s.Cluster.Clients, ns)
	if err != nil {
		return fmt.Errorf("record baseline: %w", err)
	}
	return s.Store.Write(s.Cluster.Name, baselineFile, b)
}

func (s *Session) resetIfNeeded(ctx context.Context) error {
	a, err := s.Current(ctx)
	if err != nil {
		return err
	}
	inj, err := s.injector()
	if err != nil {
		return err
	}
	if a == nil && inj.Ledger().Empty() {
		return nil
	}
	residue, err := s.Reset(ctx)
	if err != nil {
		return err
	}
	if len(residue) > 0 {
		return fmt.Errorf("reset left %d difference(s) from the baseline, first: %s", len(residue), residue[0])
	}
	return nil
}

// ResetWait bounds how long reset waits for the cluster to return to its baseline.
const ResetWait = 2 * time.Minute

// Reset reverts the ledger, brings the cluster back to its baseline and compares again: what still differs is
// returned as residue instead of being reported as success.
func (s *Session) Reset(ctx context.Context) ([]baseline.Residue, error) {
	inj, err := s.injector()
	if err != nil {
		return nil, err
	}
	if !inj.Ledger().Empty() {
		if err := s.Status.Step("Reverting the scenario's changes", func() error { return inj.Revert(ctx) }); err != nil {
			return nil, err
		}
	}
	if err := s.deleteRecord(ctx); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(s.secretsDir()); err != nil {
		return nil, err
	}
	if err := s.forgetTaskStart(); err != nil {
		return nil, err
	}
	var base baseline.Snapshot
	if err := s.Store.Read(s.Cluster.Name, baselineFile, &base); err != nil {
		if errors.Is(err, state.ErrNotFound) {
			return nil, s.Store.Remove(s.Cluster.Name, attemptFile)
		}
		return nil, err
	}
	base.Rehash()
	var residue []baseline.Residue
	err = s.Status.Step("Returning the cluster to its baseline", func() error {
		if err := s.Cluster.WaitReady(ctx, ResetWait); err != nil {
			return err
		}
		var err error
		residue, err = s.sweep(ctx, &base)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(residue) == 0 {
		if err := s.Store.Remove(s.Cluster.Name, attemptFile); err != nil {
			return nil, err
		}
	}
	return residue, nil
}

// sweep restores and compares until nothing differs or ResetWait runs out (a PersistentVolume the provisioner
// is still deleting, a namespace still terminating).
func (s *Session) sweep(ctx context.Context, base *baseline.Snapshot) ([]baseline.Residue, error) {
	ns, err := s.Cluster.Nodes()
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(ResetWait)
	restored := false
	for {
		live, err := baseline.Take(ctx, s.Cluster.Clients, ns)
		if err != nil {
			return nil, err
		}
		residue := baseline.Diff(base, live)
		if len(residue) == 0 || time.Now().After(deadline) {
			return residue, nil
		}
		if !restored || time.Now().After(deadline.Add(-ResetWait/2)) {
			if err := baseline.Restore(ctx, s.Cluster.Clients, base, live); err != nil {
				return nil, err
			}
			if err := baseline.RemoveExtraManifests(ctx, ns, base, live); err != nil {
				return nil, err
			}
			restored = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// keepChecks is how many grading runs' reports a cluster keeps.
const keepChecks = 20

// CheckDir returns a new directory for one grading run's reports, removing all but the newest keepChecks.
func (s *Session) CheckDir() string {
	root := filepath.Join(s.Store.ClusterDir(s.Cluster.Name), "checks")
	if entries, err := os.ReadDir(root); err == nil && len(entries) >= keepChecks {
		// Names are UTC timestamps, so name order is age order.
		for _, e := range entries[:len(entries)-keepChecks+1] {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
	return filepath.Join(root, time.Now().UTC().Format("20060102T150405.000"))
}

// withFailureSaved saves a failed phase and returns the failure, with the save's own error when it could not
// be saved: the learner would otherwise read "starting" in `lab status` and never learn why.
func withFailureSaved(failure error, save func() error) error {
	if err := save(); err != nil {
		return errors.Join(failure, fmt.Errorf("and the failure could not be recorded in lab's state: %w", err))
	}
	return failure
}
