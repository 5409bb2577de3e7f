// Package practice reads the learner's history against the catalogue: where they stand at each stage of the
// journey, which stage is weakest, and which scenario `lab drill` starts next.
package practice

import (
	"time"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/state/history"
	"github.com/cka-lab/lab/scenarios"
)

// Progress is the learner's history summed up per stage.
type Progress struct {
	// Attempts counts every attempt in the history.
	Attempts int
	// Stages has a row for every stage the catalogue has scenarios for, in journey order, then the stages only
	// the history knows.
	Stages []history.StageStats
	// Weakest is the stage to practise next, and Why says why in a short phrase.
	Weakest journey.Stage
	Why     string
}

// ProgressOf sums up results per stage. Results recorded under a stage the journey no longer has count where
// their scenarios are today.
func ProgressOf(cat *scenarios.Catalog, results []history.Result) Progress {
	results = history.Restage(results, stageOf(cat))
	stats := history.ByStage(results, stages(cat))
	weakest, why := history.Weakest(stats, limits(cat))
	return Progress{Attempts: len(results), Stages: stats, Weakest: weakest, Why: why}
}

// Drill picks the scenario to practise: within the weakest stage, the scenario tried least, then one not yet
// passed, in catalogue order. It returns the scenario and the progress it was chosen from.
func Drill(cat *scenarios.Catalog, results []history.Result) (string, Progress) {
	p := ProgressOf(cat, results)
	tries, passed := map[string]int{}, map[string]bool{}
	for _, r := range results {
		tries[r.Scenario]++
		passed[r.Scenario] = passed[r.Scenario] || r.Passed
	}
	best := ""
	for _, sc := range cat.All() {
		if sc.Stage != p.Weakest {
			continue
		}
		if best == "" || tries[sc.ID] < tries[best] || tries[sc.ID] == tries[best] && !passed[sc.ID] && passed[best] {
			best = sc.ID
		}
	}
	return best, p
}

// stages are the stages the catalogue has scenarios for, in journey order.
func stages(cat *scenarios.Catalog) []journey.Stage {
	var out []journey.Stage
	for _, st := range journey.Stages() {
		for _, sc := range cat.All() {
			if sc.Stage == st {
				out = append(out, st)
				break
			}
		}
	}
	return out
}

// stageOf is each scenario's stage today, "" for one the catalogue no longer has.
func stageOf(cat *scenarios.Catalog) func(string) journey.Stage {
	return func(id string) journey.Stage {
		if sc, err := cat.Get(id); err == nil {
			return sc.Stage
		}
		return ""
	}
}

// limits is each stage's longest scenario time limit: a fix is slow against the most lenient limit.
func limits(cat *scenarios.Catalog) map[journey.Stage]time.Duration {
	out := map[journey.Stage]time.Duration{}
	for _, sc := range cat.All() {
		out[sc.Stage] = max(out[sc.Stage], sc.TimeLimit.Duration)
	}
	return out
}
