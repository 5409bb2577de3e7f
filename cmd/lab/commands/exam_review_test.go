package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/coach"
	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/internal/state"
)

// TestExamReview: the review reads the kept report and the page's notes from the state directory alone (no
// exam record, no cluster), prints each question in full, and --html writes it as one file.
func TestExamReview(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LAB_STATE_DIR", dir)
	t.Setenv("NO_COLOR", "1")
	st := state.At(dir)
	first := time.Date(2026, 12, 7, 1, 54, 13, 0, time.UTC)
	rep := exam.Report{Exam: "20261207T015350Z", PassMark: exam.PassMark, Questions: []exam.QuestionReport{{
		Number: 1, Scenario: "service-selector-mismatch", Title: "A Service has no endpoints", Weight: 4, Max: 6,
		Checks:   []grader.CheckOutcome{{Name: "the Service has endpoints", Group: grader.GroupChecks, Points: 4, Evidence: "service/shop has no endpoints"}},
		Solution: []string{"kubectl -n media edit service shop"}, Why: "A Service sends traffic to the Pods its selector matches.",
		Timeline: &coach.Timeline{AfterSeconds: 29, FirstWrite: first, LastWrite: first, Writes: 1,
			Log: []coach.Write{{At: first, Verb: "patch", Object: "service/shop", Namespace: "media", User: "candidate@cka2655"}}},
	}}}
	rep.Total()
	if err := st.Write("lab", "exam-report.json", rep); err != nil {
		t.Fatal(err)
	}
	notes := session.ExamNotesFile(st, "lab", rep.Exam)
	if err := os.MkdirAll(filepath.Dir(notes), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notes, []byte(`{"1":{"text":"look at the selector","done":true}}`), 0o600); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	if code := Main([]string{"--name", "lab", "exam", "review"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("lab exam review: exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"Q1  A Service has no endpoints: FAIL, 0.0 of 4", "✗ the Service has endpoints (0/4): service/shop has no endpoints",
		"0:29  on cka2655: patch service/shop in media", "look at the selector", "Why: A Service sends", "kubectl -n media edit service shop"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the review lacks %q:\n%s", want, out.String())
		}
	}

	file := filepath.Join(t.TempDir(), "review.html")
	out.Reset()
	if code := Main([]string{"--name", "lab", "exam", "review", "--html", file}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("lab exam review --html: exit %d: %s", code, errOut.String())
	}
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "service/shop has no endpoints") || !strings.Contains(string(b), "look at the selector") {
		t.Errorf("the HTML review: %v\n%.300s", err, b)
	}

	errOut.Reset()
	if code := Main([]string{"--name", "other", "exam", "review"}, strings.NewReader(""), &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "no graded exam on cluster other") {
		t.Errorf("a review without a graded exam: exit %d, %s", code, errOut.String())
	}
}
