package grader

import (
	"testing"
	"time"

	"github.com/cka-lab/lab/scenarios"
)

func TestSettlingEndsTheWait(t *testing.T) {
	checks := []Planned{
		{Group: GroupChecks, Check: scenarios.Check{Name: "task"}},
		{Group: GroupChecks, Check: scenarios.Check{Name: "manifest", Decisive: true}},
		{Group: GroupCollateral, Check: scenarios.Check{Name: "collateral"}},
	}
	type round struct{ task, manifest, collateral bool }
	cases := []struct {
		name   string
		rounds []round
		every  time.Duration
		want   int // the round (1-based) that settles, 0 for none
	}{
		{"all hold", []round{{true, true, true}, {true, true, true}, {true, true, true}}, time.Second, 3},
		{"a decisive check keeps failing", []round{{false, false, true}, {false, false, true}, {false, false, true}}, time.Second, 3},
		{"a decisive check recovers", []round{{false, false, true}, {false, true, true}, {false, false, true}, {false, false, true}}, time.Second, 0},
		{"a failing task check alone waits", []round{{false, true, true}, {false, true, true}, {false, true, true}, {false, true, true}}, time.Second, 0},
		{"collateral broken briefly waits", []round{{true, true, false}, {true, true, false}, {true, true, false}}, time.Second, 0},
		{"collateral broken for long ends", []round{{true, true, false}, {true, true, false}, {true, true, false}}, 6 * time.Second, 3},
		{"collateral broken while the task fails waits", []round{{false, true, false}, {false, true, false}, {false, true, false}}, 6 * time.Second, 0},
	}
	for _, c := range cases {
		var s settling
		now, got := time.Unix(0, 0), 0
		for i, r := range c.rounds {
			results := []Result{{OK: r.task}, {OK: r.manifest}, {OK: r.collateral}}
			if s.done(checks, results, now) != "" {
				got = i + 1
				break
			}
			now = now.Add(c.every)
		}
		if got != c.want {
			t.Errorf("%s: settled at round %d, want %d", c.name, got, c.want)
		}
	}
}

func TestConvergedFailingVerdict(t *testing.T) {
	fail, pass := Result{}, Result{OK: true}
	cases := []struct {
		name    string
		results [][]Result
		quiet   []bool
		want    int // the round (1-based) that gives the verdict, 0 for none
	}{
		{"results still and nothing to wait for", [][]Result{{fail, pass}, {fail, pass}, {fail, pass}, {fail, pass}}, []bool{true, true, true, true}, 3},
		{"results changing", [][]Result{{fail, pass}, {fail, fail}, {fail, pass}, {fail, fail}}, []bool{true, true, true, true}, 0},
		{"a rollout still in progress", [][]Result{{fail, pass}, {fail, pass}, {fail, pass}, {fail, pass}}, []bool{false, false, false, false}, 0},
		{"converges late", [][]Result{{fail, pass}, {fail, pass}, {fail, pass}, {fail, pass}, {fail, pass}}, []bool{false, false, true, true, true}, 5},
	}
	for _, c := range cases {
		var s settling
		got := 0
		for i, r := range c.results {
			// minFail has passed in every round here; its own floor is the last test.
			if s.converged(r, c.quiet[i], time.Minute) {
				got = i + 1
				break
			}
		}
		if got != c.want {
			t.Errorf("%s: verdict at round %d, want %d", c.name, got, c.want)
		}
	}
	var s settling
	for range 5 {
		if s.converged([]Result{fail}, true, time.Second) {
			t.Fatal("a failing verdict came before minFail")
		}
	}
}

func TestCollateralThroughWorkloadsKeepsItsHold(t *testing.T) {
	field := Planned{Group: GroupCollateral, Check: scenarios.Check{Name: "binding unchanged", Field: &scenarios.FieldCheck{}}}
	http := Planned{Group: GroupCollateral, Check: scenarios.Check{Name: "serves", HTTP: &scenarios.HTTPCheck{}}}
	task := Planned{Group: GroupChecks, Check: scenarios.Check{Name: "task", Exec: &scenarios.ExecCheck{}}}
	if brokenThroughWorkloads([]Planned{task, field}, []Result{{}, {}}) {
		t.Error("a broken object check reaches no workload (and a failing task check is not collateral)")
	}
	if !brokenThroughWorkloads([]Planned{task, http}, []Result{{OK: true}, {}}) {
		t.Error("a broken HTTP check may still be recovering from a kubelet restart")
	}
	probe := Planned{Group: GroupCollateral, Check: scenarios.Check{Name: "rejects", Admission: &scenarios.AdmissionCheck{}}}
	if brokenThroughWorkloads([]Planned{task, probe}, []Result{{OK: true}, {Evidence: "creating Pod: is accepted"}}) {
		t.Error("a probe the API server judged without a webhook reaches no workload")
	}
	if !brokenThroughWorkloads([]Planned{task, probe}, []Result{{OK: true}, {viaWebhook: true}}) {
		t.Error("a probe whose webhook could not be called may be waiting for the webhook's new Pod")
	}
}
