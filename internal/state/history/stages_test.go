package history

import (
	"strings"
	"testing"
	"time"

	"github.com/cka-lab/lab/internal/journey"
)

func TestByStageKeepsOrderAndUnattemptedStages(t *testing.T) {
	as := []Result{
		{Stage: "runtime", Passed: true, TimeToPass: 2 * time.Minute, Hints: 1, Diagnosis: &Diagnosis{Correct: true}},
		{Stage: "runtime", Passed: true, TimeToPass: 4 * time.Minute},
		{Stage: "runtime", Passed: true, TimeToPass: 9 * time.Minute, Diagnosis: &Diagnosis{}},
		{Stage: "retired-stage"},
	}
	rows := ByStage(as, []journey.Stage{"scheduling", "runtime"})
	if len(rows) != 3 || rows[0].Stage != "scheduling" || rows[1].Stage != "runtime" || rows[2].Stage != "retired-stage" {
		t.Fatalf("rows %+v", rows)
	}
	r := rows[1]
	if r.Attempts != 3 || r.Passes != 3 || r.MedianTimeToPass != 4*time.Minute || r.Hints != 1 || r.Diagnoses != 2 || r.DiagnosesCorrect != 1 {
		t.Errorf("runtime row %+v", r)
	}
	if rows[0].Attempts != 0 {
		t.Errorf("scheduling row %+v", rows[0])
	}
}

func TestWeakest(t *testing.T) {
	limits := map[journey.Stage]time.Duration{"scheduling": 6 * time.Minute, "runtime": 5 * time.Minute, "storage": 8 * time.Minute}
	for _, tc := range []struct {
		name  string
		stats []StageStats
		want  journey.Stage
		why   string
	}{
		{
			name: "an unattempted stage comes first, in journey order",
			stats: []StageStats{
				{Stage: "scheduling", Attempts: 2, Passes: 0},
				{Stage: "runtime"},
				{Stage: "storage"},
			},
			want: "runtime", why: "not tried a scenario of the runtime stage yet",
		},
		{
			name: "failures outweigh slow passes",
			stats: []StageStats{
				{Stage: "scheduling", Attempts: 2, Passes: 2, MedianTimeToPass: 5 * time.Minute},
				{Stage: "runtime", Attempts: 2, Passes: 1, MedianTimeToPass: time.Minute},
			},
			want: "runtime", why: "passed 1 of 2",
		},
		{
			name: "the slowest fixes relative to the time limit",
			stats: []StageStats{
				{Stage: "scheduling", Attempts: 1, Passes: 1, MedianTimeToPass: 3 * time.Minute},
				{Stage: "storage", Attempts: 1, Passes: 1, MedianTimeToPass: 7 * time.Minute},
			},
			want: "storage", why: "fixes take 7m0s (median) of a 8m0s time limit",
		},
		{
			name: "hints and wrong diagnoses",
			stats: []StageStats{
				{Stage: "scheduling", Attempts: 2, Passes: 2, MedianTimeToPass: time.Minute, Hints: 4},
				{Stage: "runtime", Attempts: 2, Passes: 2, MedianTimeToPass: time.Minute, Diagnoses: 2},
			},
			want: "runtime", why: "2 of your 2 runtime diagnoses were wrong",
		},
		{
			name: "a tie goes to the less practised stage",
			stats: []StageStats{
				{Stage: "scheduling", Attempts: 3, Passes: 3},
				{Stage: "runtime", Attempts: 1, Passes: 1},
			},
			want: "runtime", why: "practised runtime least",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := Weakest(tc.stats, limits)
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("Weakest = %q (%s), want %q (%s)", got, why, tc.want, tc.why)
			}
		})
	}
}

func TestRestageKeepsOldHistoriesCounting(t *testing.T) {
	now := map[string]journey.Stage{"bad-image-tag": "image", "env-configmap-key-missing": "container", "cni-plugin-missing": "sandbox"}
	old := []Result{
		{Scenario: "bad-image-tag", Stage: "runtime"},
		{Scenario: "env-configmap-key-missing", Stage: "runtime"},
		{Scenario: "cni-plugin-missing", Stage: "network"},
		{Scenario: "retired-scenario", Stage: "storage"},
		{Scenario: "retired-scenario", Stage: "runtime"},
		{Scenario: "other", Stage: "retired-stage"},
	}
	got := Restage(old, func(id string) journey.Stage { return now[id] })
	want := []journey.Stage{"image", "container", "sandbox", "volumes", "image", "retired-stage"}
	for i, a := range got {
		if a.Stage != want[i] {
			t.Errorf("attempt %d (%s, %s): stage %q, want %q", i, old[i].Scenario, old[i].Stage, a.Stage, want[i])
		}
	}
	if old[0].Stage != "runtime" {
		t.Error("Restage changed its input")
	}
}
