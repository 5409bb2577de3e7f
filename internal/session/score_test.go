package session

import (
	"testing"
	"time"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/state/history"
)

func TestScoreCountsHintsAndDiagnosis(t *testing.T) {
	right := &Diagnosis{Stage: journey.Image, Correct: true}
	for _, tc := range []struct {
		name                string
		hints               int
		diagnosis           *Diagnosis
		earned, max         int
		final, finalMax, pc int
	}{
		{"no hint, no diagnosis", 0, nil, 6, 6, 6, 6, 100},
		{"each hint costs its points", 2, nil, 6, 6, 6 - 2*HintCost, 6, (6 - 2*HintCost) * 100 / 6},
		{"hints never take the score below 0", 3, nil, 1, 6, 0, 6, 0},
		{"a wrong diagnosis earns nothing", 0, &Diagnosis{Stage: journey.Scheduling}, 3, 6, 3, 6, 50},
		{"a right diagnosis adds to score and maximum", 1, right, 0, 6, DiagnosisBonus, 6 + DiagnosisBonus, DiagnosisBonus * 100 / (6 + DiagnosisBonus)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Attempt{Hints: tc.hints, Diagnosis: tc.diagnosis}
			s := a.Score(tc.earned, tc.max)
			if s.Final != tc.final || s.FinalMax != tc.finalMax || s.Percent() != tc.pc {
				t.Errorf("score %+v (%d%%), want %d/%d (%d%%)", s, s.Percent(), tc.final, tc.finalMax, tc.pc)
			}
			if s.Penalty() != tc.hints*HintCost {
				t.Errorf("penalty %d for %d hint(s)", s.Penalty(), tc.hints)
			}
		})
	}
}

func TestAttemptRecord(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	a := &Attempt{Scenario: "bad-image-tag", Seed: 3, Started: t0, Hints: 1, SawSolution: true,
		Diagnosis: &Diagnosis{Stage: journey.Image, Object: "deploy/web", Correct: true}}
	r := a.Record(history.EventStop, journey.Image, t0.Add(90*time.Second))
	if r.Graded || r.Seconds != 90 || r.Stage != journey.Image || r.Hints != 1 || !r.SawSolution || r.Diagnosis == nil || !r.Diagnosis.Correct {
		t.Errorf("never checked: %+v", r)
	}
	a.LastCheck = &CheckNote{Passed: true, Score: 6, Max: 7}
	if r := a.Record(history.EventCheck, journey.Image, t0.Add(time.Minute)); !r.Graded || !r.Passed || r.Score != 6 || r.Max != 7 {
		t.Errorf("checked: %+v", r)
	}
}
