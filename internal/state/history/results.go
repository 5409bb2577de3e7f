package history

import (
	"slices"
	"sort"
	"time"

	"github.com/cka-lab/lab/internal/journey"
)

// Result is everything the history knows about one attempt at a scenario, folded from its records. (The attempt
// in progress on a cluster is session.Attempt; a Result is what is left of it once recorded.)
type Result struct {
	Scenario string        `json:"scenario"`
	Stage    journey.Stage `json:"stage"`
	Started  time.Time     `json:"started"`
	Exam     string        `json:"exam,omitempty"`
	Passed   bool          `json:"passed"`
	// TimeToPass is the time spent until the first passing grade; 0 when it never passed.
	TimeToPass time.Duration `json:"timeToPass"`
	// Score and Max are the best graded result of the attempt.
	Score     int        `json:"score"`
	Max       int        `json:"max"`
	Graded    bool       `json:"graded"`
	Hints     int        `json:"hints"`
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`
}

// Ratio is the attempt's best score as a fraction of its maximum.
func (a Result) Ratio() float64 {
	if a.Max == 0 {
		return 0
	}
	return float64(a.Score) / float64(a.Max)
}

// Results folds records into one Result per attempt, in the order the attempts started. Records of one attempt
// share the scenario and the start time.
func Results(recs []Record) []Result {
	type key struct {
		scenario string
		started  time.Time
		exam     string
	}
	index := map[key]int{}
	var out []Result
	for _, r := range recs {
		k := key{r.Scenario, r.Started.UTC(), r.Exam}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, Result{Scenario: r.Scenario, Stage: r.Stage, Started: r.Started, Exam: r.Exam})
		}
		a := &out[i]
		a.Hints = max(a.Hints, r.Hints)
		if a.Diagnosis == nil && r.Diagnosis != nil {
			d := *r.Diagnosis
			a.Diagnosis = &d
		}
		if r.Graded && (!a.Graded || better(r.Score, r.Max, a.Score, a.Max)) {
			a.Score, a.Max, a.Graded = r.Score, r.Max, true
		}
		if r.Passed && !a.Passed {
			a.Passed, a.TimeToPass = true, time.Duration(max(r.Seconds, 0)*float64(time.Second)).Round(time.Second)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out
}

// better compares score ratios without floating point.
func better(s1, m1, s2, m2 int) bool {
	if m2 == 0 {
		return m1 > 0 || s1 > s2
	}
	return s1*m2 > s2*m1
}

// Best is a learner's best result at one scenario.
type Best struct {
	Score  int  `json:"score"`
	Max    int  `json:"max"`
	Passed bool `json:"passed"`
	// TimeToPass is the fastest pass; 0 when it never passed.
	TimeToPass time.Duration `json:"timeToPass,omitempty"`
}

// BestByScenario returns each graded scenario's best result: a pass beats a fail, then the higher score, then
// the faster pass.
func BestByScenario(results []Result) map[string]Best {
	out := map[string]Best{}
	for _, a := range results {
		if !a.Graded {
			continue
		}
		cand := Best{Score: a.Score, Max: a.Max, Passed: a.Passed, TimeToPass: a.TimeToPass}
		cur, ok := out[a.Scenario]
		switch {
		case !ok,
			cand.Passed && !cur.Passed,
			cand.Passed == cur.Passed && better(cand.Score, cand.Max, cur.Score, cur.Max),
			cand.Passed && cur.Passed && cand.Score*cur.Max == cur.Score*cand.Max && cand.TimeToPass < cur.TimeToPass:
			out[a.Scenario] = cand
		}
	}
	return out
}

// median of durations; 0 for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
