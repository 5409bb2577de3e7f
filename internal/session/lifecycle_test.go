package session_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/fakecluster"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/internal/state"
	"github.com/cka-lab/lab/internal/state/history"
	"github.com/cka-lab/lab/internal/ui"
	"github.com/cka-lab/lab/scenarios"
)

// scenarioYAML is a scenario whose faults reach both the API and a node; its symptom is read from the node
// and its file (the fake cluster runs no Pods).
const scenarioYAML = `id: dedicated-worker
title: Pods of app web stay Pending
stage: scheduling
competency: troubleshooting
difficulty: easy
weight: 5
timeLimit: 6m
task: Make the Deployment web in namespace shop run on node lab-worker.
setup:
  - |
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: setup-note, namespace: shop}
    data: {note: made by the setup}
faults:
  - taint: {node: lab-worker, key: dedicated, value: gpu, effect: NoSchedule}
  - nodeFile: {node: lab-worker, path: /etc/containerd/config.toml, replace: {old: "true", new: "false"}}
symptom:
  - name: the worker is tainted
    nodeTaint: {node: lab-worker, key: dedicated, effect: NoSchedule, present: true}
  - name: containerd's config was edited
    nodeFile: {node: lab-worker, path: /etc/containerd/config.toml, exists: true, contains: SystemdCgroup = false}
hints:
  - Look at the node's taints.
checks:
  - name: web runs
    points: 10
    podsReady: {namespace: shop, selector: app=web, count: 2}
collateral:
  - name: the worker stays reserved
    points: 1
    nodeTaint: {node: lab-worker, key: dedicated, effect: NoSchedule, present: true}
diagnosis: {object: node/lab-worker}
explanation: The taint repels the Pods.
solution:
  - kubectl -n shop patch deploy web --type merge -p '{"spec":{"template":{"spec":{"tolerations":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]}}}}'
wrongFixes:
  - name: remove the taint
    why: the node is reserved
    run:
      - kubectl taint node lab-worker dedicated-
altFixes:
  - name: tolerate the key with Exists
    run:
      - kubectl -n shop patch deploy web --type merge -p '{"spec":{"template":{"spec":{"tolerations":[{"key":"dedicated","operator":"Exists"}]}}}}'
  - name: tolerate every NoSchedule taint of the key
    run:
      - kubectl -n shop patch deploy web --type merge -p '{"spec":{"template":{"spec":{"tolerations":[{"key":"dedicated","operator":"Exists","effect":"NoSchedule"}]}}}}'
`

type fixture struct {
	cluster *fakecluster.Cluster
	session *session.Session
	catalog *scenarios.Catalog
	store   *state.Store
	// graded are the plans the fake grader was given.
	graded []grader.Plan
	// passing is what the fake grader says of every question.
	passing bool
	// grading, when set, runs while the fake grader grades: another command racing the check.
	grading func()
}

// newFixture is a session on a fresh fake cluster with its state, and the learner's history, in a temporary
// XDG state directory, and a grader that answers at once instead of a child process.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	t.Setenv("LAB_STATE_DIR", "")
	store, err := state.Open()
	if err != nil {
		t.Fatal(err)
	}
	c, err := fakecluster.New()
	if err != nil {
		t.Fatal(err)
	}
	marker := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster.MarkerNamespace}}
	if _, err := c.Typed.CoreV1().Namespaces().Create(context.Background(), marker, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nodes, err := c.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := scenarios.LoadFS(fstest.MapFS{"catalog/dedicated-worker.yaml": {Data: []byte(scenarioYAML)}}, "catalog")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{cluster: c, catalog: cat, store: store, passing: true}
	f.session = &session.Session{
		Cluster: cluster.Over(cluster.Record{Name: "lab"}, c.Clients, nodes),
		Store:   store,
		Status:  ui.New(io.Discard),
		Self:    filepath.Join(dir, "lab"),
		Grade:   f.grade,
	}
	return f
}

func (f *fixture) grade(_ context.Context, plan grader.Plan, _ string, _ func(grader.Progress)) (*grader.Outcome, error) {
	f.graded = append(f.graded, plan)
	if f.grading != nil {
		f.grading()
	}
	out := &grader.Outcome{Passed: f.passing}
	for _, q := range plan.Questions {
		score := 0
		if f.passing {
			score = 10
		}
		out.Questions = append(out.Questions, grader.QuestionOutcome{ID: q.ID, Passed: f.passing, Score: score, Max: 10})
		out.Score, out.Max = out.Score+score, out.Max+10
	}
	return out, nil
}

func (f *fixture) history(t *testing.T) []history.Record {
	t.Helper()
	p, err := history.Path()
	if err != nil {
		t.Fatal(err)
	}
	recs, err := history.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// Start records the attempt and breaks the cluster, check grades it and writes a history line, reset reverts the
// ledger back to the baseline and forgets the attempt, and stop records and resets a second attempt.
func TestAttemptLifecycle(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before, err := f.cluster.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := f.catalog.Get("dedicated-worker")
	if err != nil {
		t.Fatal(err)
	}

	inst, err := f.session.Start(ctx, sc, 7)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	a, got, err := f.session.Active(ctx, f.catalog)
	if err != nil {
		t.Fatalf("Active after Start: %v", err)
	}
	if a.Scenario != sc.ID || a.Seed != 7 || a.Phase != session.PhaseActive || a.Started.IsZero() || got.ID != inst.ID {
		t.Fatalf("attempt after Start = %+v, want %s seed 7 active and shown", a, sc.ID)
	}
	n, err := f.cluster.Typed.CoreV1().Nodes().Get(ctx, fakecluster.Worker, metav1.GetOptions{})
	if err != nil || len(n.Spec.Taints) != 1 {
		t.Fatalf("the worker's taints after Start: %v (%v), want the fault's", n.Spec.Taints, err)
	}
	if conf, _ := f.cluster.Worker.ReadFile("/etc/containerd/config.toml"); !strings.Contains(conf, "SystemdCgroup = false") {
		t.Fatalf("containerd's config after Start: %q, want the fault's edit", conf)
	}

	checked, err := f.session.Check(ctx, a, inst, 0, false, nil)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if len(f.graded) != 1 || f.graded[0].Cluster != "lab" || len(f.graded[0].Questions) != 1 || f.graded[0].Questions[0].ID != sc.ID {
		t.Fatalf("the grader got %+v, want one question of %s on cluster lab", f.graded, sc.ID)
	}
	if !checked.Outcome.Passed || a.LastCheck == nil || !a.LastCheck.Passed || a.LastCheck.Max == 0 {
		t.Fatalf("attempt after a passing check: %+v, outcome %+v", a.LastCheck, checked.Outcome)
	}
	if recs := f.history(t); len(recs) != 1 || recs[0].Event != history.EventCheck || recs[0].Scenario != sc.ID || !recs[0].Passed {
		t.Fatalf("history after Check: %+v, want one passing check of %s", recs, sc.ID)
	}

	residue, err := f.session.Reset(ctx)
	if err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if len(residue) > 0 {
		t.Fatalf("Reset left residue: %v", residue)
	}
	assertAsBefore(t, f.cluster, before, "Reset")
	if a, err := f.session.Current(ctx); err != nil || a != nil {
		t.Fatalf("attempt after Reset: %+v, %v; want none", a, err)
	}

	if _, err := f.session.Start(ctx, sc, 8); err != nil {
		t.Fatalf("second Start: %v", err)
	}
	stopped, err := f.session.Stop(ctx, f.catalog)
	if err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if !stopped.Recorded || len(stopped.Residue) > 0 {
		t.Fatalf("Stop = %+v, want the attempt recorded and no residue", stopped)
	}
	recs := f.history(t)
	if len(recs) != 2 || recs[1].Event != history.EventStop || recs[1].Seed != 8 {
		t.Fatalf("history after Stop: %+v, want the check, then a stop of seed 8", recs)
	}
	assertAsBefore(t, f.cluster, before, "Stop")
}

// A Start that finds an attempt in progress (another learner's, an interrupted one) resets it first.
func TestStartResetsTheAttemptInProgress(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sc, err := f.catalog.Get("dedicated-worker")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.session.Start(ctx, sc, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.session.Start(ctx, sc, 2); err != nil {
		t.Fatalf("Start over an attempt in progress: %v", err)
	}
	n, err := f.cluster.Typed.CoreV1().Nodes().Get(ctx, fakecluster.Worker, metav1.GetOptions{})
	if err != nil || len(n.Spec.Taints) != 1 {
		t.Fatalf("the worker's taints: %v (%v), want the fault's once", n.Spec.Taints, err)
	}
	if a, err := f.session.Current(ctx); err != nil || a == nil || a.Seed != 2 {
		t.Fatalf("attempt: %+v, %v; want seed 2", a, err)
	}
}

// assertAsBefore fails the test unless the cluster is as before, but for the injector's empty backup
// directory on the nodes and lab's own record of the baseline.
func assertAsBefore(t *testing.T, c *fakecluster.Cluster, before *fakecluster.Snapshot, after string) {
	t.Helper()
	now, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range now.Nodes {
		delete(n.Files, "/var/lib/lab-backup")
	}
	if diff := before.Diff(now); len(diff) > 0 {
		t.Fatalf("the cluster after %s differs from before:\n%s", after, strings.Join(diff, "\n"))
	}
}

// An exam start records the exam and breaks the cluster for its question; grading it asks the grader once,
// marks it graded, keeps the report, adds the question to the history; ending it restores the cluster.
func TestExamStartAndGrade(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before, err := f.cluster.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := f.catalog.Get("dedicated-worker")
	if err != nil {
		t.Fatal(err)
	}
	e, insts, err := f.session.StartExam(ctx, session.ExamOptions{Pool: []*scenarios.Scenario{sc}, Exactly: true, Questions: 1, Seed: 3, Duration: time.Hour})
	if err != nil {
		t.Fatalf("StartExam: %v", err)
	}
	if e.Phase != session.PhaseActive || len(e.Questions) != 1 || e.Questions[0].Scenario != sc.ID || len(insts) != 1 {
		t.Fatalf("exam after StartExam: %+v, want one active question of %s", e, sc.ID)
	}
	if saved, err := f.session.Exam(); err != nil || saved == nil || saved.ID != e.ID {
		t.Fatalf("the exam record: %+v, %v; want %s", saved, err, e.ID)
	}
	rep, out, err := f.session.GradeExam(ctx, e, insts, false)
	if err != nil {
		t.Fatalf("GradeExam: %v", err)
	}
	if len(f.graded) != 1 || !out.Passed || len(rep.Questions) != 1 || !rep.Questions[0].Passed {
		t.Fatalf("graded %d time(s), outcome %+v, report %+v; want one passing question", len(f.graded), out, rep)
	}
	if saved, err := f.session.Exam(); err != nil || saved.Phase != session.PhaseGraded {
		t.Fatalf("the exam record after grading: %+v, %v; want graded", saved, err)
	}
	if kept, err := f.session.ExamReport(); err != nil || kept == nil || kept.Exam != e.ID {
		t.Fatalf("the kept report: %+v, %v", kept, err)
	}
	if recs := f.history(t); len(recs) != 1 || recs[0].Event != history.EventExam || recs[0].Exam != e.ID {
		t.Fatalf("history after GradeExam: %+v, want the exam's question", recs)
	}
	residue, _, err := f.session.EndExam(ctx, e)
	if err != nil || len(residue) > 0 {
		t.Fatalf("EndExam: residue %v, %v", residue, err)
	}
	assertAsBefore(t, f.cluster, before, "EndExam")
}
