package exam

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/scenarios"
)

// fakeResolver answers for a cluster with this many workers.
type fakeResolver struct{ workers int }

func (r fakeResolver) Nodes(role string) ([]string, error) {
	if role != "worker" {
		return []string{"lab-control-plane"}, nil
	}
	out := []string{"lab-worker"}
	for i := 2; i <= r.workers; i++ {
		out = append(out, fmt.Sprintf("lab-worker%d", i))
	}
	return out, nil
}
func (fakeResolver) CNIConfig(string) (string, error) {
	return "/etc/cni/net.d/10-kindnet.conflist", nil
}
func (fakeResolver) CNIPlugin(string) (string, error) { return "/opt/cni/bin/ptp", nil }
func (fakeResolver) Builtin(name string) string       { return "builtin-" + name }

func builtin(t *testing.T) *scenarios.Catalog {
	t.Helper()
	cat, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestFootprintOfTheCatalogue(t *testing.T) {
	cat := builtin(t)
	want := map[string]bool{
		"bad-image-tag": false, "init-missing-config-key": false, "pvc-missing-storageclass": false,
		"rbac-deployer-create": false, "readiness-probe-wrong-path": false,
		"taint-dedicated-node": true, "cni-plugin-missing": true, "webhook-require-limits": true,
	}
	for _, sc := range cat.All() {
		inst, err := sc.Instantiate(1, fakeResolver{workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		fp, err := FootprintOf(inst)
		if err != nil {
			t.Fatalf("%s: %v", sc.ID, err)
		}
		if wide, ok := want[sc.ID]; ok && wide != fp.ClusterWide {
			t.Errorf("%s: cluster-wide %t (%s), want %t", sc.ID, fp.ClusterWide, fp.Why, wide)
		}
		// A scenario of the control plane alone (a certificate to renew) has no namespace, and is cluster-wide.
		if len(fp.Namespaces) == 0 && !fp.ClusterWide || len(fp.Namespaces) > 0 && !strings.Contains(inst.Task, fp.Namespaces[0]) && sc.ID != "webhook-require-limits" {
			t.Errorf("%s: namespaces %v do not match the task", sc.ID, fp.Namespaces)
		}
	}
}

// synthetic builds a namespace-scoped scenario whose namespace is picked from nss.
func synthetic(t *testing.T, id, stage string, nss ...string) *scenarios.Scenario {
	t.Helper()
	src := fmt.Sprintf(`id: %s
title: synthetic %s
stage: %s
difficulty: easy
competency: workloads
weight: 4
timeLimit: 5m
vars:
  ns: {pick: [%s]}
task: namespace ${ns}
setup:
  - |
    apiVersion: v1
    kind: Namespace
    metadata: {name: "${ns}"}
faults:
  - apply:
      manifest: |
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: c, namespace: "${ns}"}
symptom:
  - name: s
    exists: {apiVersion: v1, kind: ConfigMap, namespace: "${ns}", name: c}
hints: [h]
checks:
  - name: c
    points: 1
    absent: {apiVersion: v1, kind: ConfigMap, namespace: "${ns}", name: c}
collateral:
  - name: k
    points: 1
    exists: {apiVersion: v1, kind: Namespace, name: "${ns}"}
wrongFixes:
  - {name: w, why: w, run: [w]}
altFixes:
  - {name: a, run: [a]}
  - {name: b, run: [b]}
diagnosis: {object: configmap/c}
explanation: e
solution: [s]
`, id, id, stage, strings.Join(nss, ", "))
	sc, err := scenarios.Parse(id+".yaml", []byte(src))
	if err != nil {
		t.Fatalf("synthetic scenario: %v", err)
	}
	return sc
}

func namespaceOf(t *testing.T, inst *scenarios.Instance) string {
	t.Helper()
	fp, err := FootprintOf(inst)
	if err != nil {
		t.Fatal(err)
	}
	return fp.Namespaces[0]
}

func TestSelectIsIndependent(t *testing.T) {
	cat := builtin(t)
	// Every namespaced scenario of the catalogue fits an exam of 16, and one cluster-wide one.
	namespaced := 0
	for _, sc := range cat.All() {
		inst, err := sc.Instantiate(1, fakeResolver{workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if fp, _ := FootprintOf(inst); !fp.ClusterWide {
			namespaced++
		}
	}
	want := min(namespaced+1, 16)
	for seed := int64(0); seed < 50; seed++ {
		sel, err := Select(cat.All(), 16, seed, fakeResolver{workers: 2}, 1)
		if err != nil {
			t.Fatal(err)
		}
		wide, used := 0, map[string]string{}
		for i, q := range sel.Questions {
			fp, _ := FootprintOf(q)
			if fp.ClusterWide {
				wide++
				if i != len(sel.Questions)-1 {
					t.Errorf("seed %d: cluster-wide question %s is not last", seed, q.ID)
				}
			}
			for _, ns := range fp.Namespaces {
				if other, ok := used[ns]; ok {
					t.Errorf("seed %d: %s and %s share namespace %s", seed, q.ID, other, ns)
				}
				used[ns] = q.ID
			}
		}
		if wide > 1 {
			t.Errorf("seed %d: %d cluster-wide questions", seed, wide)
		}
		if len(sel.Questions) != want {
			t.Errorf("seed %d: %d questions, want the %d namespaced ones and 1 cluster-wide", seed, len(sel.Questions), namespaced)
		}
	}
}

func TestSelectKeepsAWorkerForTheOtherQuestions(t *testing.T) {
	cat := builtin(t)
	for seed := int64(0); seed < 20; seed++ {
		sel, err := Select(cat.All(), 16, seed, fakeResolver{workers: 1}, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range sel.Questions {
			// The control-plane node may change (a static Pod manifest); the only worker may not.
			if fp, _ := FootprintOf(q); slices.Contains(fp.Nodes, "lab-worker") {
				t.Errorf("seed %d: %s changes the only worker %v", seed, q.ID, fp.Nodes)
			}
		}
	}
	taint, _ := cat.Get("taint-dedicated-node")
	if _, err := SelectThese([]*scenarios.Scenario{taint}, 1, fakeResolver{workers: 1}, 1); err != nil {
		t.Errorf("a question alone may change the only worker: %v", err)
	}
	image, _ := cat.Get("bad-image-tag")
	_, err := SelectThese([]*scenarios.Scenario{image, taint}, 1, fakeResolver{workers: 1}, 1)
	if err == nil || !strings.Contains(err.Error(), "--workers 2") {
		t.Errorf("taint with another question on one worker: %v", err)
	}
}

func TestSelectSpreadsOverStagesAndIsDeterministic(t *testing.T) {
	cat := builtin(t)
	a, _ := Select(cat.All(), 3, 7, fakeResolver{workers: 2}, 1)
	b, _ := Select(cat.All(), 3, 7, fakeResolver{workers: 2}, 1)
	stages := map[journey.Stage]bool{}
	for i, q := range a.Questions {
		stages[q.Stage] = true
		if q.ID != b.Questions[i].ID || q.Seed != b.Questions[i].Seed {
			t.Errorf("seed 7 drew different exams: %s/%d vs %s/%d", q.ID, q.Seed, b.Questions[i].ID, b.Questions[i].Seed)
		}
	}
	if len(a.Questions) != 3 || len(stages) != 3 {
		t.Errorf("3 questions should cover 3 stages, got %d questions over %v", len(a.Questions), stages)
	}
}

func TestSelectReseedsOnNamespaceCollision(t *testing.T) {
	x := synthetic(t, "sx1", "image", "shared")
	y := synthetic(t, "sy1", "readiness", "shared", "own")
	sel, err := SelectThese([]*scenarios.Scenario{x, y}, 3, fakeResolver{workers: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := namespaceOf(t, sel.Questions[1]); got != "own" {
		t.Errorf("y got namespace %q, want it re-seeded into own", got)
	}
}

func TestSelectSkipsWhatCannotAvoidACollision(t *testing.T) {
	x := synthetic(t, "sx1", "image", "shared")
	y := synthetic(t, "sy1", "readiness", "shared")
	if _, err := SelectThese([]*scenarios.Scenario{x, y}, 3, fakeResolver{workers: 2}, 1); err == nil || !strings.Contains(err.Error(), "both use namespace shared") {
		t.Errorf("SelectThese: %v, want a namespace collision", err)
	}
	sel, err := Select([]*scenarios.Scenario{x, y}, 2, 3, fakeResolver{workers: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Questions) != 1 || len(sel.Skipped) != 1 || !strings.Contains(sel.Skipped[0], "namespace shared") {
		t.Errorf("Select: %d questions, skipped %v", len(sel.Questions), sel.Skipped)
	}
}

func TestSelectTheseRefusesTwoClusterWideQuestions(t *testing.T) {
	cat := builtin(t)
	taint, _ := cat.Get("taint-dedicated-node")
	hook, _ := cat.Get("webhook-require-limits")
	_, err := SelectThese([]*scenarios.Scenario{taint, hook}, 1, fakeResolver{workers: 2}, 1)
	if err == nil || !strings.Contains(err.Error(), "an exam takes one such question") {
		t.Errorf("got %v", err)
	}
}

func outcome(qs ...grader.QuestionOutcome) *grader.Outcome { return &grader.Outcome{Questions: qs} }

func check(group string, points int, passed bool) grader.CheckOutcome {
	c := grader.CheckOutcome{Name: "c", Group: group, Points: points, Passed: passed, Evidence: "why"}
	if passed {
		c.Earned = points
	}
	return c
}

func TestScoreAgainstThePassMark(t *testing.T) {
	qs := []Question{{Number: 1, Scenario: "a", Weight: 4, Solution: []string{"kubectl edit deployment web"}, Why: "the image is wrong"}, {Number: 2, Scenario: "b", Weight: 4}}
	fixed := grader.QuestionOutcome{ID: "a", Passed: true, Checks: []grader.CheckOutcome{check(grader.GroupChecks, 3, true), check(grader.GroupCollateral, 2, true)}}
	untouched := grader.QuestionOutcome{ID: "b", Checks: []grader.CheckOutcome{check(grader.GroupChecks, 3, false), check(grader.GroupCollateral, 2, true)}}
	rep := Score("e", qs, outcome(fixed, untouched), time.Hour, time.Now())
	if rep.Percent != 50 || rep.Passed {
		t.Errorf("one of two equal questions: %.1f%% passed=%t, want 50%% failed", rep.Percent, rep.Passed)
	}
	if rep.Questions[1].Credit != 0 || len(rep.Questions[1].Failing) != 1 {
		t.Errorf("an untouched question earns nothing from its collateral checks: %+v", rep.Questions[1])
	}
	if q := rep.Questions[0]; len(q.Checks) != 2 || q.Checks[0].Evidence != "why" || q.Why != "the image is wrong" || len(q.Solution) != 1 {
		t.Errorf("the report keeps what the review shows (checks with evidence, solution, why): %+v", q)
	}
}

func TestScorePartialAndOverBroad(t *testing.T) {
	qs := []Question{{Number: 1, Scenario: "a", Weight: 4}, {Number: 2, Scenario: "b", Weight: 7}, {Number: 3, Scenario: "c", Weight: 9}}
	partial := grader.QuestionOutcome{ID: "a", Checks: []grader.CheckOutcome{check(grader.GroupChecks, 3, true), check(grader.GroupChecks, 1, false)}}
	overBroad := grader.QuestionOutcome{ID: "b", OverBroad: true, Checks: []grader.CheckOutcome{check(grader.GroupChecks, 3, true), check(grader.GroupCollateral, 2, false)}}
	full := grader.QuestionOutcome{ID: "c", Passed: true, Checks: []grader.CheckOutcome{check(grader.GroupChecks, 5, true)}}
	rep := Score("e", qs, outcome(partial, overBroad, full), time.Hour, time.Now())
	if got := rep.Questions[0].Credit; got != 3 {
		t.Errorf("3 of 4 task points of weight 4: credit %v, want 3", got)
	}
	if rep.Questions[1].Credit != 0 {
		t.Errorf("an over-broad fix earns nothing: %+v", rep.Questions[1])
	}
	if rep.Percent != 60 || rep.Passed {
		t.Errorf("(3+0+9)/20: %.1f%%, want 60%% and a fail", rep.Percent)
	}
	rep = Score("e", qs[2:], outcome(full), time.Hour, time.Now())
	if rep.Percent != 100 || !rep.Passed {
		t.Errorf("full marks: %.1f%%", rep.Percent)
	}
}

func TestScoreUngradedQuestion(t *testing.T) {
	rep := Score("e", []Question{{Number: 1, Scenario: "a", Weight: 4}}, nil, 0, time.Now())
	if rep.Percent != 0 || rep.Questions[0].Failing[0] != "not graded" {
		t.Errorf("%+v", rep)
	}
}

func TestWriteJUnit(t *testing.T) {
	rep := Report{Exam: "e1", Percent: 50, PassMark: PassMark, Questions: []QuestionReport{
		{Number: 1, Scenario: "a", Title: "A", Stage: "runtime", Weight: 4, Passed: true, Credit: 4, Seconds: 61},
		{Number: 2, Scenario: "b", Title: "B", Stage: "readiness", Weight: 4, StoppedAt: "readiness", Failing: []string{"pods: 0 of 2 <Ready>"}},
	}}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, rep); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`tests="2" failures="1"`, `name="Q1 a: A" classname="runtime" time="61.000"`,
		`<property name="percent" value="50.0">`, `stopped at readiness`, `0 of 2 &lt;Ready&gt;`} {
		if !strings.Contains(out, want) {
			t.Errorf("JUnit report lacks %q:\n%s", want, out)
		}
	}
}

func TestSelectTheseOnTwoClusters(t *testing.T) {
	cat := builtin(t)
	taint, _ := cat.Get("taint-dedicated-node")
	hook, _ := cat.Get("webhook-require-limits")
	image, _ := cat.Get("bad-image-tag")
	sel, err := SelectThese([]*scenarios.Scenario{taint, image, hook}, 1, fakeResolver{workers: 2}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, q := range sel.Questions {
		got = append(got, fmt.Sprintf("%s@%d", q.ID, sel.Cluster[i]))
	}
	// The namespaced question shares the first cluster; each cluster-wide one has a cluster of its own, last.
	if want := "bad-image-tag@0 taint-dedicated-node@0 webhook-require-limits@1"; strings.Join(got, " ") != want {
		t.Errorf("placed %v, want %s", got, want)
	}
	cni, _ := cat.Get("cni-plugin-missing")
	_, err = SelectThese([]*scenarios.Scenario{taint, hook, cni}, 1, fakeResolver{workers: 2}, 2)
	if err == nil || !strings.Contains(err.Error(), "one such question per cluster (on at most 2 clusters)") {
		t.Errorf("three cluster-wide questions on two clusters: %v", err)
	}
}

func TestSelectTheseMovesAWorkerBreakerToTheSecondCluster(t *testing.T) {
	cat := builtin(t)
	taint, _ := cat.Get("taint-dedicated-node")
	image, _ := cat.Get("bad-image-tag")
	// On one worker the taint would stop bad-image-tag's fix from rolling out; alone on a second cluster it
	// stops nothing.
	sel, err := SelectThese([]*scenarios.Scenario{image, taint}, 1, fakeResolver{workers: 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sel.Cluster, []int{0, 1}) {
		t.Errorf("clusters %v, want the taint on the second", sel.Cluster)
	}
}

func TestSelectUsesASecondClusterOnlyForASecondClusterWideQuestion(t *testing.T) {
	cat := builtin(t)
	for seed := int64(0); seed < 30; seed++ {
		sel, err := Select(cat.All(), 16, seed, fakeResolver{workers: 2}, 2)
		if err != nil {
			t.Fatal(err)
		}
		wide := map[int]int{}
		for i, q := range sel.Questions {
			fp, _ := FootprintOf(q)
			if fp.ClusterWide {
				wide[sel.Cluster[i]]++
			} else if sel.Cluster[i] != 0 {
				t.Errorf("seed %d: namespaced %s on cluster %d", seed, q.ID, sel.Cluster[i])
			}
		}
		if wide[0] != 1 || wide[1] != 1 {
			t.Errorf("seed %d: cluster-wide questions per cluster %v, want one on each", seed, wide)
		}
	}
	taint, _ := cat.Get("taint-dedicated-node")
	image, _ := cat.Get("bad-image-tag")
	sel, err := Select([]*scenarios.Scenario{image, taint}, 2, 3, fakeResolver{workers: 2}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sel.Cluster, []int{0, 0}) {
		t.Errorf("one cluster-wide question needs no second cluster: %v", sel.Cluster)
	}
}
