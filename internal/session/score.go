package session

import (
	"time"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/state/history"
)

// HintCost is what each hint takes off the score; `lab hint` says so before it reveals one.
const HintCost = 1

// DiagnosisBonus is what a right first diagnosis adds to both the score and its maximum.
const DiagnosisBonus = 1

// Score is a graded attempt's result with its hints and its diagnosis counted.
type Score struct {
	// Earned and Max are the grader's points.
	Earned, Max int
	Hints       int
	// Bonus is the diagnosis's credit, added to both Final and FinalMax.
	Bonus           int
	Final, FinalMax int
}

// Score counts the attempt's hints and diagnosis into the grader's points: each hint costs HintCost (the points
// never go below 0), and a right first diagnosis adds DiagnosisBonus to the score and to its maximum, so it can
// make up for a hint but never turn a failed check into a pass.
func (a *Attempt) Score(earned, maxPoints int) Score {
	bonus := a.DiagnosisCredit()
	return Score{Earned: earned, Max: maxPoints, Hints: a.Hints, Bonus: bonus,
		Final: max(earned-a.Hints*HintCost, 0) + bonus, FinalMax: maxPoints + bonus}
}

// DiagnosisCredit is what the attempt's diagnosis earns: DiagnosisBonus when it is right, else nothing.
func (a *Attempt) DiagnosisCredit() int {
	if a.Diagnosis != nil && a.Diagnosis.Correct {
		return DiagnosisBonus
	}
	return 0
}

// Penalty is what the hints cost.
func (s Score) Penalty() int { return s.Hints * HintCost }

// Percent is the final score in percent of its maximum, rounded down.
func (s Score) Percent() int {
	if s.FinalMax == 0 {
		return 0
	}
	return s.Final * 100 / s.FinalMax
}

// Record is the history's record of the attempt at a scenario of stage at this moment (event says which: a
// check, a stop), with the time spent since the task was shown and the last grade, if any.
func (a *Attempt) Record(event history.Event, stage journey.Stage, now time.Time) history.Record {
	r := history.Record{
		At: now.UTC(), Event: event, Scenario: a.Scenario, Stage: stage, Seed: a.Seed, Started: a.Started,
		Hints: a.Hints, SawSolution: a.SawSolution, Seconds: now.Sub(a.Started).Seconds(),
	}
	if c := a.LastCheck; c != nil {
		r.Graded, r.Passed, r.Score, r.Max = true, c.Passed, c.Score, c.Max
	}
	if d := a.Diagnosis; d != nil {
		r.Diagnosis = &history.Diagnosis{Stage: d.Stage, Correct: d.Correct}
	}
	return r
}
