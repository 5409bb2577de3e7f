package commands

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/internal/state"
)

// runWithExam runs lab against a state directory holding an exam in phase, with no cluster: the guard must
// decide from the record alone.
func runWithExam(t *testing.T, phase session.Phase, args ...string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("LAB_STATE_DIR", dir)
	t.Setenv("NO_COLOR", "1")
	now := time.Now().UTC()
	e := &session.Exam{V: session.ExamVersion, Phase: phase, Started: now, CurrentSince: now, Duration: time.Hour,
		Questions: []session.ExamQuestion{{Scenario: "bad-image-tag"}, {Scenario: "readiness-probe-wrong-path"}}}
	if err := state.At(dir).Write("guarded", "exam.json", e); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Main(append([]string{"--name", "guarded"}, args...), strings.NewReader(""), &out, &errOut)
	return errOut.String(), code
}

func TestExamGuardClosesPracticeCommands(t *testing.T) {
	timeLeft := regexp.MustCompile(`exam: (1:00:00|59:\d\d) left, question 1/2`)
	for _, args := range [][]string{{"check"}, {"hint"}, {"solution"}, {"start", "bad-image-tag"}, {"reset"}, {"stop"},
		{"diagnose", "runtime"}, {"explain"}, {"drill"}} {
		stderr, code := runWithExam(t, session.PhaseActive, args...)
		if code == 0 || !strings.Contains(stderr, "not available in an exam") {
			t.Errorf("lab %s during an exam: exit %d, %s", args[0], code, stderr)
		}
		if !timeLeft.MatchString(stderr) {
			t.Errorf("lab %s: no time left on stderr: %s", args[0], stderr)
		}
	}
}

func TestExamGuardShowsTimeLeftOnOtherCommands(t *testing.T) {
	stderr, code := runWithExam(t, session.PhaseActive, "list", "-o", "json")
	if code != 0 || !strings.Contains(stderr, "left, question 1/2") {
		t.Errorf("lab list during an exam: exit %d, %s", code, stderr)
	}
}

func TestExamGuardAfterAFailedStart(t *testing.T) {
	stderr, code := runWithExam(t, session.PhaseFailed, "check")
	if code == 0 || !strings.Contains(stderr, "run `lab exam stop`") {
		t.Errorf("exit %d, %s", code, stderr)
	}
	stderr, code = runWithExam(t, session.PhaseGraded, "list")
	if code != 0 || strings.Contains(stderr, "exam") {
		t.Errorf("a graded exam is over: exit %d, %s", code, stderr)
	}
}

func TestExamGuardKeepsPracticeOffAnExamsSecondCluster(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LAB_STATE_DIR", dir)
	t.Setenv("NO_COLOR", "1")
	now := time.Now().UTC()
	e := &session.Exam{V: session.ExamVersion, Phase: session.PhaseActive, Started: now, CurrentSince: now, Duration: time.Hour,
		Clusters: []string{"guarded-exam2"}, Questions: []session.ExamQuestion{{Scenario: "taint-dedicated-node", Cluster: "guarded-exam2"}}}
	if err := state.At(dir).Write("guarded", "exam.json", e); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Main([]string{"--name", "guarded-exam2", "reset"}, strings.NewReader(""), &out, &errOut)
	if code == 0 || !strings.Contains(errOut.String(), "holds a question of the exam on cluster guarded") {
		t.Errorf("lab reset on the exam's second cluster: exit %d, %s", code, errOut.String())
	}
}
