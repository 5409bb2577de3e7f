package class

import (
	"sort"
	"strings"
	"time"
)

// Cell statuses, as the scoreboard colours them.
const (
	statusNotStarted = "not-started"
	statusInProgress = "in-progress"
	statusFailed     = "failed"
	statusPassed     = "passed"
)

// cell is where one learner stands on one scenario. A pass sticks: a later failing check (the learner
// experimenting after solving it) does not take the pass away.
type cell struct {
	Status           string        `json:"status"`
	Score            int           `json:"score"`
	MaxScore         int           `json:"maxScore"`
	ChecksPassed     int           `json:"checksPassed"`
	ChecksTotal      int           `json:"checksTotal"`
	TimeUsed         time.Duration `json:"timeUsedNs"`
	HintsTaken       int           `json:"hintsTaken"`
	DiagnosisCorrect *bool         `json:"diagnosisCorrect,omitempty"`
	LastAt           time.Time     `json:"lastAt"`
	// Source is who graded the check the status comes from: SourceServer or SourceSelf.
	Source string `json:"source,omitempty"`
}

func (c *cell) apply(r Result) {
	c.LastAt = r.At
	c.HintsTaken = max(c.HintsTaken, r.HintsTaken)
	if r.Event == EventDiagnose && r.DiagnosisCorrect != nil {
		c.DiagnosisCorrect = new(*r.DiagnosisCorrect)
	}
	if c.Status == statusPassed {
		return
	}
	if r.TimeUsed > 0 {
		c.TimeUsed = r.TimeUsed
	}
	switch {
	case r.Event == EventCheck:
		c.Score, c.MaxScore, c.ChecksPassed, c.ChecksTotal = r.Score, r.MaxScore, r.ChecksPassed, r.ChecksTotal
		c.Source, c.Status = r.Source, statusFailed
		if r.Passed {
			c.Status = statusPassed
		}
	case c.Status == "" || c.Status == statusNotStarted:
		c.Status = statusInProgress
	}
}

// row is one learner on the scoreboard, with a cell for every scenario of the plan.
type row struct {
	Name string `json:"name"`
	// Left is set once the learner left the class.
	Left       bool            `json:"left,omitempty"`
	TotalScore int             `json:"totalScore"`
	Passed     int             `json:"passed"`
	TimeUsed   time.Duration   `json:"timeUsedNs"`
	Cells      map[string]cell `json:"cells"`
}

// board aggregates results as they arrive, so the page and the exports never re-read the whole history.
type board struct{ rows map[string]*row }

func newBoard() *board { return &board{rows: map[string]*row{}} }

func (b *board) addLearner(l learner) {
	id := strings.ToLower(l.Name)
	if _, ok := b.rows[id]; !ok {
		b.rows[id] = &row{Name: l.Name, Cells: map[string]cell{}}
	}
	b.rows[id].Left = l.Left
}

// markLeft shows that a learner left.
func (b *board) markLeft(name string) {
	if r, ok := b.rows[strings.ToLower(name)]; ok {
		r.Left = true
	}
}

// apply counts a result; results only arrive from joined learners, whose rows exist.
func (b *board) apply(r Result) {
	learnerRow := b.rows[strings.ToLower(r.Learner)]
	c := learnerRow.Cells[r.Scenario]
	c.apply(r)
	learnerRow.Cells[r.Scenario] = c
}

// snapshot copies the board for the plan's scenarios, sorted by name, with totals filled in.
func (b *board) snapshot(scenarios []string) []row {
	out := make([]row, 0, len(b.rows))
	for _, stored := range b.rows {
		r := row{Name: stored.Name, Left: stored.Left, Cells: make(map[string]cell, len(scenarios))}
		for _, s := range scenarios {
			c, ok := stored.Cells[s]
			if !ok {
				c.Status = statusNotStarted
			}
			r.Cells[s] = c
			r.TotalScore += c.Score
			r.TimeUsed += c.TimeUsed
			if c.Status == statusPassed {
				r.Passed++
			}
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out
}
