package grader

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

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
}

// RunChild grades plan in a child process (`self __grade`), which writes ginkgo's reports into dir, and reads
// the outcome back from the JSON report. The child's own output goes to dir/ginkgo.log.
func RunChild(ctx context.Context, self string, plan Plan, dir string, extraEnv []string) (*Outcome, error) {
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
	defer logFile.Close()
	_ = os.Remove(filepath.Join(dir, JSONReport))
	cmd := exec.CommandContext(ctx, self, "__grade", "--plan", planFile, "--report-dir", dir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), extraEnv...)
	dieWithParent(cmd)
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
		qo := QuestionOutcome{ID: q.ID, Title: q.Title, Passed: true}
		tasksPass, collateralFails := true, false
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
			if co.Passed {
				co.Earned = co.Points
			} else {
				qo.Passed = false
				if qo.StoppedAt == "" {
					qo.StoppedAt = co.Stage
				}
				tasksPass = tasksPass && p.Group != GroupChecks
				collateralFails = collateralFails || p.Group == GroupCollateral
			}
			qo.Score += co.Earned
			qo.Max += co.Points
			qo.Checks = append(qo.Checks, co)
		}
		qo.OverBroad = tasksPass && collateralFails
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
