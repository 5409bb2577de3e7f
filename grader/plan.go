package grader

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/scenarios"
)

// Plan is what one `lab check` grades: one question per scenario (several in an exam).
type Plan struct {
	Cluster   string     `json:"cluster"`
	Questions []Question `json:"questions"`
}

// Question is one scenario instance's checks.
type Question struct {
	ID     string        `json:"id"`
	Title  string        `json:"title"`
	Stage  journey.Stage `json:"stage"`
	Settle time.Duration `json:"settle"`
	// Shown is when the learner was shown the task, for sameObject checks.
	Shown  time.Time `json:"shown,omitempty"`
	Checks []Planned `json:"checks"`
}

// Groups of checks: what the task asks, and what an over-broad fix breaks.
const (
	GroupChecks     = "checks"
	GroupCollateral = "collateral"
)

// Planned is a check with its group.
type Planned struct {
	Group string          `json:"group"`
	Check scenarios.Check `json:"check"`
}

// DefaultSettle is how long a check waits for the cluster to converge after a fix (a rollout, a restart).
const DefaultSettle = 30 * time.Second

// QuestionFor turns a scenario instance into a question; settle overrides the scenario's wait when >= 0.
func QuestionFor(inst *scenarios.Instance, settle time.Duration) Question {
	q := Question{ID: inst.ID, Title: inst.Title, Stage: inst.Stage, Settle: DefaultSettle}
	if inst.Settle.Duration > 0 {
		q.Settle = inst.Settle.Duration
	}
	if settle >= 0 {
		q.Settle = settle
	}
	for _, c := range inst.Checks {
		q.Checks = append(q.Checks, Planned{Group: GroupChecks, Check: c})
	}
	for _, c := range inst.Collateral {
		q.Checks = append(q.Checks, Planned{Group: GroupCollateral, Check: c})
	}
	return q
}

// ReadPlan reads the plan RunChild wrote for the grading child.
func ReadPlan(path string) (Plan, error) {
	var plan Plan
	b, err := os.ReadFile(path)
	if err != nil {
		return plan, err
	}
	if err := json.Unmarshal(b, &plan); err != nil {
		return plan, fmt.Errorf("read plan %s: %w", path, err)
	}
	return plan, nil
}
