package grader

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/cka-lab/lab/internal/journey"
)

// CheckOutcome is one graded check.
type CheckOutcome struct {
	Name     string        `json:"name"`
	Group    string        `json:"group"`
	Points   int           `json:"points"`
	Earned   int           `json:"earned"`
	Passed   bool          `json:"passed"`
	Evidence string        `json:"evidence"`
	Stage    journey.Stage `json:"stage,omitempty"`
}

// QuestionOutcome is one graded scenario.
type QuestionOutcome struct {
	ID     string         `json:"id"`
	Title  string         `json:"title"`
	Passed bool           `json:"passed"`
	Score  int            `json:"score"`
	Max    int            `json:"max"`
	Checks []CheckOutcome `json:"checks"`
	// StoppedAt is the stage the first failing check points at: the handoff that still fails.
	StoppedAt journey.Stage `json:"stoppedAt,omitempty"`
	// OverBroad is true when the task's checks pass but a collateral check fails: the fix went too far.
	OverBroad bool `json:"overBroad"`
	// Settled says how long grading waited for the cluster and what ended the wait.
	Settled *Settled `json:"settled,omitempty"`
}

// Outcome is the result of a grading run.
type Outcome struct {
	Passed    bool              `json:"passed"`
	Score     int               `json:"score"`
	Max       int               `json:"max"`
	Questions []QuestionOutcome `json:"questions"`
	// Reports are ginkgo's report files.
	JSONReport  string `json:"jsonReport"`
	JUnitReport string `json:"junitReport"`
	// Survive is what each disturbance after a passing grade did to the fix (`lab check --survive`, exams).
	Survive []Survived `json:"survive,omitempty"`
}

// Survived is one disturbance graded again after: the checks that passed before it and failed after.
type Survived struct {
	Disturbance string   `json:"disturbance"`
	Undid       []string `json:"undid"`
}

// Undo fails the check of question id that a disturbance undid, with what grading read after it, and scores
// the question and the outcome again: a fix that does not outlast the cluster's own disturbances earns nothing.
func (o *Outcome) Undo(id, disturbance string, after CheckOutcome) {
	o.Passed, o.Score = true, 0
	for qi := range o.Questions {
		q := &o.Questions[qi]
		if q.ID == id {
			for ci := range q.Checks {
				if c := &q.Checks[ci]; c.Name == after.Name {
					c.Passed, c.Earned, c.Stage = false, 0, after.Stage
					c.Evidence = fmt.Sprintf("undone by %q: %s", disturbance, after.Evidence)
				}
			}
			q.tally()
		}
		o.Passed = o.Passed && q.Passed
		o.Score += q.Score
	}
}

// tally scores the question from its checks, as ReadOutcome does.
func (q *QuestionOutcome) tally() {
	q.Passed, q.Score, q.StoppedAt = true, 0, ""
	tasksPass, collateralFails := true, false
	for _, c := range q.Checks {
		q.Score += c.Earned
		if c.Passed {
			continue
		}
		q.Passed = false
		if q.StoppedAt == "" {
			q.StoppedAt = c.Stage
		}
		tasksPass = tasksPass && c.Group != GroupChecks
		collateralFails = collateralFails || c.Group == GroupCollateral
	}
	q.OverBroad = tasksPass && collateralFails
}

// RunChild grades plan in a child process (`self __grade`), which writes ginkgo's reports into dir, and reads
// the outcome back from the JSON report. The child's own output goes to dir/ginkgo.log.
// Each round's Progress reaches onProgress (when set) as the child settles.
func RunChild(ctx context.Context, self string, plan Plan, dir string, extraEnv []string, onProgress func(Progress)) (*Outcome, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	planFile := filepath.Join(dir, "plan.json")
	b, err := json.Marshal(plan)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(planFile, b, 0o600); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(filepath.Join(dir, "ginkgo.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer func() { _ = logFile.Close() }()
	_ = os.Remove(filepath.Join(dir, JSONReport))
	cmd := exec.CommandContext(ctx, self, "__grade", "--plan", planFile, "--report-dir", dir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), extraEnv...)
	dieWithParent(cmd)
	var progressDone chan struct{}
	if onProgress != nil {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("progress pipe: %w", err)
		}
		cmd.ExtraFiles = []*os.File{w}
		cmd.Env = append(cmd.Env, progressFDEnv+"=3")
		progressDone = make(chan struct{})
		go func() {
			defer close(progressDone)
			defer func() { _ = r.Close() }()
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				var p Progress
				if json.Unmarshal(sc.Bytes(), &p) == nil {
					onProgress(p)
				}
			}
		}()
		defer func() { <-progressDone }()
		defer func() { _ = w.Close() }()
	}
	runErr := cmd.Run()
	// Ginkgo writes its reports world-readable; lab's state stays private.
	for _, f := range []string{JSONReport, JUnitReport} {
		_ = os.Chmod(filepath.Join(dir, f), 0o600)
	}
	out, err := ReadOutcome(plan, dir)
	if err != nil {
		return nil, fmt.Errorf("grade (see %s): %v: %w", logFile.Name(), runErr, err)
	}
	return out, nil
}

// progressFDEnv names the file descriptor a grading child writes its Progress lines to.
const progressFDEnv = "LAB_GRADE_PROGRESS_FD"

// ProgressReporter returns what a grading child reports each settling round to, or nil when its parent
// did not ask.
func ProgressReporter() func(Progress) {
	if os.Getenv(progressFDEnv) != "3" {
		return nil
	}
	f := os.NewFile(3, "progress")
	enc := json.NewEncoder(f)
	var mu sync.Mutex
	return func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(p)
	}
}

// ReadOutcome scores ginkgo's JSON report against the plan.
func ReadOutcome(plan Plan, dir string) (*Outcome, error) {
	b, err := os.ReadFile(filepath.Join(dir, JSONReport))
	if err != nil {
		return nil, err
	}
	var reports []types.Report
	if err := json.Unmarshal(b, &reports); err != nil {
		return nil, fmt.Errorf("read ginkgo report: %w", err)
	}
	specs := map[string]types.SpecReport{}
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType == types.NodeTypeIt {
				specs[s.ContainerHierarchyTexts[0]+"\x00"+s.LeafNodeText] = s
			}
		}
	}
	out := &Outcome{Passed: true, JSONReport: filepath.Join(dir, JSONReport), JUnitReport: filepath.Join(dir, JUnitReport)}
	for _, q := range plan.Questions {
		qo := QuestionOutcome{ID: q.ID, Title: q.Title}
		for _, p := range q.Checks {
			s, ok := specs[fmt.Sprintf("%s: %s", q.ID, q.Title)+"\x00"+p.Check.Name]
			co := CheckOutcome{Name: p.Check.Name, Group: p.Group, Points: p.Check.Points}
			if !ok {
				co.Evidence = "not graded (the grader stopped early; see " + filepath.Join(dir, "ginkgo.log") + ")"
			} else {
				co.Passed = s.State == types.SpecStatePassed
				if pts, err := strconv.Atoi(specLabel(s, "points")); err == nil {
					co.Points = pts
				}
				co.Evidence, co.Stage = resultOf(s)
				if !co.Passed && s.Failure.Message != "" && co.Evidence == "" {
					co.Evidence = s.Failure.Message
				}
			}
			if ok && qo.Settled == nil {
				qo.Settled = settledOf(s)
			}
			if co.Passed {
				co.Earned = co.Points
			}
			qo.Max += co.Points
			qo.Checks = append(qo.Checks, co)
		}
		qo.tally()
		out.Passed = out.Passed && qo.Passed
		out.Score += qo.Score
		out.Max += qo.Max
		out.Questions = append(out.Questions, qo)
	}
	return out, nil
}

// resultOf reads the check's last result from its report entry, or the failure when there is none.
func resultOf(s types.SpecReport) (string, journey.Stage) {
	for _, e := range s.ReportEntries {
		if e.Name != "result" {
			continue
		}
		var r Result
		if json.Unmarshal([]byte(e.Value.AsJSON), &r) == nil && (r.OK == (s.State == types.SpecStatePassed)) {
			return r.Evidence, r.Stage
		}
	}
	if s.Failure.Message != "" {
		return s.Failure.Message, ""
	}
	return s.State.String(), ""
}

// settledOf reads how the question's wait ended from the report entry its first spec carries.
func settledOf(s types.SpecReport) *Settled {
	for _, e := range s.ReportEntries {
		if e.Name != "settle" {
			continue
		}
		var st Settled
		if json.Unmarshal([]byte(e.Value.AsJSON), &st) == nil {
			return &st
		}
	}
	return nil
}
