package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func TestAppendReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", FileName)
	recs := []Record{
		{At: t0.Add(time.Minute), Event: EventCheck, Scenario: "bad-image-tag", Stage: "runtime", Started: t0, Score: 3, Max: 6, Graded: true},
		{At: t0.Add(2 * time.Minute), Event: EventStop, Scenario: "bad-image-tag", Stage: "runtime", Started: t0, Hints: 1,
			Diagnosis: &Diagnosis{Stage: "runtime", Correct: true}},
	}
	if err := Append(path, recs[0]); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, recs[1]); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].V != Version || got[1].Diagnosis == nil || got[1].Hints != 1 {
		t.Fatalf("read back %+v", got)
	}
	b, _ := os.ReadFile(path)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(line, `{"v":1,`) {
			t.Errorf("line does not start with its version: %s", line)
		}
	}
}

func TestReadSurvivesForeignLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	content := strings.Join([]string{
		`{"v":1,"at":"2026-05-01T10:01:00Z","event":"check","scenario":"a","stage":"runtime","started":"2026-05-01T10:00:00Z","passed":true,"graded":true,"score":5,"max":5,"futureField":"ignored"}`,
		`{"v":2,"scenario":"from-a-newer-lab"}`,
		`{"scenario":"no-version"}`,
		`{"v":1,"scenario":"cut short by a cra`,
		``,
	}, "\n")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Scenario != "a" || !got[0].Passed {
		t.Fatalf("got %+v, want only the v1 record", got)
	}
}

func TestReadMissingFileIsEmpty(t *testing.T) {
	got, err := Read(filepath.Join(t.TempDir(), "none.jsonl"))
	if err != nil || got != nil {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestAttemptsFoldRecords(t *testing.T) {
	t1 := t0.Add(time.Hour)
	recs := []Record{
		{At: t0.Add(time.Minute), Scenario: "x", Stage: "runtime", Started: t0, Graded: true, Score: 2, Max: 6},
		{At: t0.Add(3 * time.Minute), Scenario: "x", Stage: "runtime", Started: t0, Graded: true, Passed: true, Score: 5, Max: 6, Hints: 1, Seconds: 180},
		{At: t0.Add(4 * time.Minute), Scenario: "x", Stage: "runtime", Started: t0, Graded: true, Passed: true, Score: 4, Max: 6, Hints: 2, Seconds: 240},
		{At: t1.Add(time.Minute), Event: EventStop, Scenario: "x", Stage: "runtime", Started: t1,
			Diagnosis: &Diagnosis{Stage: "scheduling"}},
	}
	as := Results(recs)
	if len(as) != 2 {
		t.Fatalf("got %d attempts, want 2: %+v", len(as), as)
	}
	a := as[0]
	if !a.Passed || a.TimeToPass != 3*time.Minute || a.Score != 5 || a.Hints != 2 {
		t.Errorf("first attempt %+v: want passed after 3m, best score 5, 2 hints", a)
	}
	if b := as[1]; b.Passed || b.Graded || b.Diagnosis == nil || b.Diagnosis.Correct {
		t.Errorf("second attempt %+v: want ungraded, wrong diagnosis", b)
	}
}

func TestBestByScenario(t *testing.T) {
	as := []Result{
		{Scenario: "x", Graded: true, Score: 6, Max: 6, Passed: true, TimeToPass: 5 * time.Minute},
		{Scenario: "x", Graded: true, Score: 6, Max: 6, Passed: true, TimeToPass: 3 * time.Minute},
		{Scenario: "x", Graded: true, Score: 7, Max: 7, Passed: false},
		{Scenario: "y", Graded: true, Score: 1, Max: 6},
		{Scenario: "y", Graded: true, Score: 4, Max: 6},
		{Scenario: "z"},
	}
	best := BestByScenario(as)
	if b := best["x"]; !b.Passed || b.TimeToPass != 3*time.Minute {
		t.Errorf("x: %+v, want the faster pass", b)
	}
	if b := best["y"]; b.Score != 4 {
		t.Errorf("y: %+v, want 4/6", b)
	}
	if _, ok := best["z"]; ok {
		t.Error("z was never graded and must have no best")
	}
}
