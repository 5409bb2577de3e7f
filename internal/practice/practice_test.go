package practice

import (
	"testing"
	"time"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/state/history"
	"github.com/cka-lab/lab/scenarios"
)

func builtin(t *testing.T) *scenarios.Catalog {
	t.Helper()
	cat, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// passedEverywhere is a history with one quick pass at every stage but one.
func passedEverywhere(cat *scenarios.Catalog, except journey.Stage) []history.Result {
	var out []history.Result
	seen := map[journey.Stage]bool{}
	for _, sc := range cat.All() {
		if sc.Stage == except || seen[sc.Stage] {
			continue
		}
		seen[sc.Stage] = true
		out = append(out, history.Result{Scenario: sc.ID, Stage: sc.Stage, Passed: true, Graded: true, TimeToPass: time.Minute})
	}
	return out
}

func TestDrillStartsWithAnUntriedStage(t *testing.T) {
	cat := builtin(t)
	id, p := Drill(cat, passedEverywhere(cat, journey.Scheduling))
	sc, err := cat.Get(id)
	if err != nil {
		t.Fatalf("drill chose %q: %v", id, err)
	}
	if p.Weakest != journey.Scheduling || sc.Stage != journey.Scheduling {
		t.Errorf("drill chose %s (%s), weakest %s; want a scheduling scenario", id, sc.Stage, p.Weakest)
	}
}

func TestDrillPrefersTheLeastTriedScenarioOfTheStage(t *testing.T) {
	cat := builtin(t)
	var ofStage []string
	for _, sc := range cat.All() {
		if sc.Stage == journey.Scheduling {
			ofStage = append(ofStage, sc.ID)
		}
	}
	if len(ofStage) < 2 {
		t.Skip("the catalogue has fewer than two scheduling scenarios")
	}
	results := passedEverywhere(cat, journey.Scheduling)
	// Every scheduling scenario failed once, the first of them twice: the stage is the weakest, and the first
	// of the least-tried scenarios is drilled.
	for _, id := range ofStage {
		results = append(results, history.Result{Scenario: id, Stage: journey.Scheduling, Graded: true})
	}
	results = append(results, history.Result{Scenario: ofStage[0], Stage: journey.Scheduling, Graded: true})
	id, p := Drill(cat, results)
	if p.Weakest != journey.Scheduling || id != ofStage[1] {
		t.Errorf("drill chose %s at %s, want %s at scheduling (%s)", id, p.Weakest, ofStage[1], p.Why)
	}
}

func TestProgressCountsOldStagesWhereTheirScenariosAreToday(t *testing.T) {
	cat := builtin(t)
	sc := cat.All()[0]
	p := ProgressOf(cat, []history.Result{{Scenario: sc.ID, Stage: "runtime", Graded: true, Passed: true}})
	for _, row := range p.Stages {
		if row.Stage == "runtime" {
			t.Fatalf("a retired stage has a row: %+v", p.Stages)
		}
		if row.Stage == sc.Stage && row.Passes != 1 {
			t.Errorf("%s: %+v, want the pass counted there", sc.Stage, row)
		}
	}
	if p.Attempts != 1 {
		t.Errorf("attempts %d, want 1", p.Attempts)
	}
}
