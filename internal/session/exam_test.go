package session

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/state"
)

func newExam(start time.Time, d time.Duration, n int) *Exam {
	e := &Exam{Phase: PhaseActive, Started: start, CurrentSince: start, Duration: d}
	e.Questions = make([]ExamQuestion, n)
	return e
}

func TestExamChargesTimeToTheCurrentQuestion(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	e := newExam(t0, time.Hour, 3)
	e.Go(1, t0.Add(5*time.Minute))
	e.Go(0, t0.Add(15*time.Minute))
	e.Go(-1, t0.Add(16*time.Minute))
	if e.Current != 2 {
		t.Fatalf("prev from the first question wraps to the last: current %d", e.Current)
	}
	if got := e.SpentOn(2, t0.Add(20*time.Minute)); got != 4*time.Minute {
		t.Errorf("running question: %s, want 4m", got)
	}
	e.StopClock(t0.Add(2 * time.Hour))
	e.StopClock(t0.Add(3 * time.Hour))
	want := []time.Duration{6 * time.Minute, 10 * time.Minute, 44 * time.Minute}
	for i, w := range want {
		if e.Questions[i].Spent != w {
			t.Errorf("question %d: %s, want %s (time after the deadline is not charged)", i+1, e.Questions[i].Spent, w)
		}
	}
}

func TestExamClock(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	e := newExam(t0, 30*time.Minute, 1)
	if e.Expired(t0.Add(29*time.Minute)) || e.Left(t0.Add(29*time.Minute)) != time.Minute {
		t.Error("a minute is left at 29m of 30m")
	}
	if !e.Expired(t0.Add(30*time.Minute)) || e.Left(t0.Add(31*time.Minute)) != 0 {
		t.Error("the exam expires at its deadline and never has negative time left")
	}
	e.Phase = PhaseGraded
	if e.Expired(t0.Add(time.Hour)) || e.Running() {
		t.Error("a graded exam neither runs nor expires")
	}
}

func TestReadExam(t *testing.T) {
	st := state.At(filepath.Join(t.TempDir(), "state"))
	if e, err := ReadExam(st, "lab"); e != nil || err != nil {
		t.Fatalf("no exam: got %v, %v", e, err)
	}
	in := newExam(time.Now().UTC().Truncate(time.Second), time.Hour, 2)
	in.Questions[1] = ExamQuestion{Scenario: "bad-image-tag", Seed: 7, Weight: 4, Flagged: true, Values: map[string]string{"ns": "web"}}
	if err := st.Write("lab", examFile, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadExam(st, "lab")
	if err != nil {
		t.Fatal(err)
	}
	if q := out.Questions[1]; q.Scenario != "bad-image-tag" || !q.Flagged || q.Values["ns"] != "web" || !out.Deadline().Equal(in.Deadline()) {
		t.Errorf("read back %+v", out)
	}
}

func TestFailureSavedOrSaid(t *testing.T) {
	cause := errors.New("inject: webhook not ready")
	if err := withFailureSaved(cause, func() error { return nil }); err != cause {
		t.Errorf("saved: %v, want the failure alone", err)
	}
	err := withFailureSaved(cause, func() error { return errors.New("disk full") })
	if !errors.Is(err, cause) || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("not saved: %v, want both the failure and why it was not recorded", err)
	}
}

func TestDueWarning(t *testing.T) {
	st := state.At(filepath.Join(t.TempDir(), "state"))
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	e := newExam(t0, 2*time.Hour, 2)
	e.ID = "first"
	for _, step := range []struct {
		at   time.Duration
		want int
	}{
		{10 * time.Minute, 0},
		{90 * time.Minute, 30}, // 30 left
		{91 * time.Minute, 0},  // given once
		{117 * time.Minute, 5}, // 3 left: the 15-minute warning was missed, only the latest is given
		{118 * time.Minute, 0},
	} {
		got, err := DueWarning(st, "lab", e, t0.Add(step.at))
		if err != nil || got != step.want {
			t.Errorf("at %s: warning %d (%v), want %d", step.at, got, err, step.want)
		}
	}
	short := newExam(t0, 20*time.Minute, 1)
	short.ID = "second"
	if got, _ := DueWarning(st, "lab", short, t0.Add(6*time.Minute)); got != 15 {
		t.Errorf("a 20-minute exam 6 minutes in: warning %d, want 15 (never 30, and a new exam starts afresh)", got)
	}
}

func TestFocusHost(t *testing.T) {
	st := state.At(filepath.Join(t.TempDir(), "state"))
	e := newExam(time.Now().UTC().Add(-time.Minute), time.Hour, 3)
	for i, h := range []string{"cka1000", "cka2000", "cka3000"} {
		e.Questions[i].Host = h
	}
	if err := st.Write("lab", examFile, e); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if i, err := FocusHost(ctx, st, "lab", "cka3000"); i != 2 || err != nil {
		t.Fatalf("FocusHost(cka3000) = %d, %v", i, err)
	}
	got, _ := ReadExam(st, "lab")
	if got.Current != 2 || got.Questions[0].Spent < 59*time.Second {
		t.Errorf("current %d, question 1 charged %s: want question 3 current, the minute charged to question 1", got.Current, got.Questions[0].Spent)
	}
	if i, err := FocusHost(ctx, st, "lab", "worker"); i != -1 || err != nil {
		t.Errorf("FocusHost(worker) = %d, %v; want -1 (no question's host)", i, err)
	}
}

func TestExamByCluster(t *testing.T) {
	e := &Exam{Clusters: []string{"lab-exam2"}, Questions: []ExamQuestion{{Host: "a"}, {Host: "b"}, {Host: "c", Cluster: "lab-exam2"}, {Host: "d"}}}
	got := e.ByCluster()
	want := []ClusterQuestions{{Name: "", Index: []int{0, 1, 3}}, {Name: "lab-exam2", Index: []int{2}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ByCluster = %+v, want %+v", got, want)
	}
	// An exam on one cluster grades in one child, as before there were two.
	one := &Exam{Questions: []ExamQuestion{{}, {}}}
	if got := one.ByCluster(); len(got) != 1 || got[0].Name != "" || len(got[0].Index) != 2 {
		t.Errorf("one cluster: %+v", got)
	}
	// Only a second cluster's questions: no empty group for the first.
	if got := (&Exam{Clusters: []string{"x"}, Questions: []ExamQuestion{{Cluster: "x"}}}).ByCluster(); len(got) != 1 || got[0].Name != "x" {
		t.Errorf("second cluster only: %+v", got)
	}
}

func TestMergeOutcomes(t *testing.T) {
	first := &grader.Outcome{Passed: true, Score: 3, Max: 3, JSONReport: "first.json", Questions: []grader.QuestionOutcome{{ID: "a", Passed: true}},
		Survive: []grader.Survived{{Disturbance: "d1"}}}
	second := &grader.Outcome{Passed: false, Score: 1, Max: 4, JSONReport: "second.json", Questions: []grader.QuestionOutcome{{ID: "b"}}}
	// The second cluster's question b was asked before the first cluster's a.
	m := mergeOutcomes([]*grader.Outcome{first, second}, []string{"b", "a"})
	if m.Passed || m.Score != 4 || m.Max != 7 || len(m.Questions) != 2 || m.Questions[0].ID != "b" || len(m.Survive) != 1 || m.JSONReport != "first.json" {
		t.Errorf("merged %+v", m)
	}
	if len(first.Questions) != 1 {
		t.Errorf("merging changed the first outcome: %+v", first)
	}
}

func TestHostCluster(t *testing.T) {
	st := state.At(filepath.Join(t.TempDir(), "state"))
	if got, err := HostCluster(st, "lab", "cka1024"); err != nil || got != "lab" {
		t.Errorf("no exam: %q %v", got, err)
	}
	e := &Exam{Clusters: []string{"lab-exam2"}, Questions: []ExamQuestion{{Host: "cka1024"}, {Host: "cka2048", Cluster: "lab-exam2"}}}
	if err := st.Write("lab", examFile, e); err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]string{"cka1024": "lab", "cka2048": "lab-exam2", "cka9999": "lab"} {
		if got, err := HostCluster(st, "lab", host); err != nil || got != want {
			t.Errorf("host %s: %q %v, want %s", host, got, err, want)
		}
	}
}

func TestDeleteExamClustersWithoutAnyIsNothing(t *testing.T) {
	if err := DeleteExamClusters(context.Background(), nil, &Exam{}); err != nil {
		t.Errorf("an exam on one cluster: %v", err)
	}
	if err := DeleteExamClusters(context.Background(), nil, &Exam{Clusters: []string{"lab-exam2"}}); err == nil {
		t.Error("clusters to delete and no provider: no error")
	}
}
