package history

import (
	"fmt"
	"time"

	"github.com/cka-lab/lab/internal/journey"
)

// Restage gives every attempt the stage its scenario has now (stageOf maps a scenario ID to its stage, "" for
// a scenario that is gone), so a history written before the journey followed the kubelet's order ("runtime",
// "network", "storage") counts where its scenarios are today; an attempt at a scenario that is gone takes the
// retired stage's successor, and a name lab never knew stays as it is.
func Restage(results []Result, stageOf func(scenario string) journey.Stage) []Result {
	out := make([]Result, len(results))
	for i, a := range results {
		if st := stageOf(a.Scenario); st != "" {
			a.Stage = st
		} else if st, ok := journey.Legacy(string(a.Stage)); ok {
			a.Stage = st
		}
		out[i] = a
	}
	return out
}

// StageStats sums up the attempts at one stage's scenarios.
type StageStats struct {
	Stage    journey.Stage `json:"stage"`
	Attempts int           `json:"attempts"`
	Passes   int           `json:"passes"`
	// MedianTimeToPass is over the passed attempts; 0 when none passed.
	MedianTimeToPass time.Duration `json:"medianTimeToPass"`
	Hints            int           `json:"hints"`
	Diagnoses        int           `json:"diagnoses"`
	DiagnosesCorrect int           `json:"diagnosesCorrect"`
}

// ByStage returns one row per stage in the order given (stages without attempts included, so the learner sees
// what is left), followed by stages the history has that were not given.
func ByStage(results []Result, stages []journey.Stage) []StageStats {
	rows := map[journey.Stage]*StageStats{}
	times := map[journey.Stage][]time.Duration{}
	order := append([]journey.Stage(nil), stages...)
	for _, s := range stages {
		rows[s] = &StageStats{Stage: s}
	}
	for _, a := range results {
		r, ok := rows[a.Stage]
		if !ok {
			r = &StageStats{Stage: a.Stage}
			rows[a.Stage] = r
			order = append(order, a.Stage)
		}
		r.Attempts++
		r.Hints += a.Hints
		if a.Passed {
			r.Passes++
			times[a.Stage] = append(times[a.Stage], a.TimeToPass)
		}
		if a.Diagnosis != nil {
			r.Diagnoses++
			if a.Diagnosis.Correct {
				r.DiagnosesCorrect++
			}
		}
	}
	out := make([]StageStats, 0, len(order))
	for _, s := range order {
		r := rows[s]
		r.MedianTimeToPass = median(times[s])
		out = append(out, *r)
	}
	return out
}

// Weights of what makes a stage weak. A failed attempt counts most: it is what the exam punishes. A fix that
// takes the whole time limit weighs as much as a wrong diagnosis; hints count half, they are the learner
// asking for help rather than getting it wrong.
const (
	weightFailed    = 2.0
	weightSlow      = 1.0
	weightHint      = 0.5
	weightDiagnosis = 1.0
)

// Weakest picks the stage to practise next among stats (in preference order on a tie): the first stage never
// attempted, else the one with the most failures, slowest fixes against its time limit (limits, by stage),
// most hints and wrong diagnoses, per attempt; on a tie the less practised one. It also says why in a short
// phrase.
func Weakest(stats []StageStats, limits map[journey.Stage]time.Duration) (journey.Stage, string) {
	for _, s := range stats {
		if s.Attempts == 0 {
			return s.Stage, fmt.Sprintf("you have not tried a scenario of the %s stage yet", s.Stage)
		}
	}
	best, bestScore, bestAttempts, why := journey.Stage(""), -1.0, 0, ""
	for _, s := range stats {
		score, reason := weakness(s, limits[s.Stage])
		if score > bestScore || score == bestScore && s.Attempts < bestAttempts {
			best, bestScore, bestAttempts, why = s.Stage, score, s.Attempts, reason
		}
	}
	return best, why
}

// weakness scores one stage and names its largest part.
func weakness(s StageStats, limit time.Duration) (float64, string) {
	n := float64(s.Attempts)
	parts := []struct {
		score  float64
		reason string
	}{
		{weightFailed * float64(s.Attempts-s.Passes) / n,
			fmt.Sprintf("you passed %d of %d %s attempt(s)", s.Passes, s.Attempts, s.Stage)},
		{weightSlow * slowness(s.MedianTimeToPass, limit),
			fmt.Sprintf("your %s fixes take %s (median) of a %s time limit", s.Stage, s.MedianTimeToPass.Round(time.Second), limit)},
		{weightHint * float64(s.Hints) / n,
			fmt.Sprintf("you took %d hint(s) in %d %s attempt(s)", s.Hints, s.Attempts, s.Stage)},
		{weightDiagnosis * float64(s.Diagnoses-s.DiagnosesCorrect) / n,
			fmt.Sprintf("%d of your %d %s diagnoses were wrong", s.Diagnoses-s.DiagnosesCorrect, s.Diagnoses, s.Stage)},
	}
	total, top, why := 0.0, 0.0, fmt.Sprintf("you have practised %s least (%d attempt(s))", s.Stage, s.Attempts)
	for _, p := range parts {
		total += p.score
		if p.score > top {
			top, why = p.score, p.reason
		}
	}
	return total, why
}

// slowness is the share of the time limit a median fix took.
func slowness(median, limit time.Duration) float64 {
	if median <= 0 || limit <= 0 {
		return 0
	}
	return float64(median) / float64(limit)
}
