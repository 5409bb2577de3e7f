package class

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Plan is what the instructor set up for the class, plus the clock state the instructor changes while it runs.
// Times are the server's clock; Client translates them to the learner's clock.
type Plan struct {
	ClassID   string        `json:"classId"`
	Title     string        `json:"title"`
	Scenarios []string      `json:"scenarios"`
	Exam      bool          `json:"exam"`
	Seed      int64         `json:"seed"`
	TimeLimit time.Duration `json:"timeLimitNs"`
	StartedAt time.Time     `json:"startedAt"`
	Paused    bool          `json:"paused"`
	PausedAt  time.Time     `json:"pausedAt"`
	// Extra is added to TimeLimit: the instructor's extensions plus the time the class spent paused.
	Extra time.Duration `json:"extraNs"`
	// RevealedHints counts, per scenario, the hints the instructor revealed to everyone.
	RevealedHints map[string]int `json:"revealedHints"`
	// Ended is set when the instructor ended the class: every learner's access was revoked, and the board is
	// final.
	Ended   bool      `json:"ended,omitempty"`
	EndedAt time.Time `json:"endedAt,omitzero"`
}

// TimeLeft is the class time remaining at now, never negative; the clock stands still while the class is paused.
func (p Plan) TimeLeft(now time.Time) time.Duration {
	if p.Ended {
		return 0
	}
	if p.Paused {
		now = p.PausedAt
	}
	return max(p.StartedAt.Add(p.TimeLimit+p.Extra).Sub(now), 0)
}

// HasScenario reports whether the class includes the scenario, so results for anything else can be refused.
func (p Plan) HasScenario(name string) bool {
	return slices.Contains(p.Scenarios, name)
}

// pause stops the clock; pausing a paused class changes nothing.
func (p *Plan) pause(now time.Time) {
	if !p.Paused {
		p.Paused, p.PausedAt = true, now
	}
}

// resume restarts the clock, giving back the paused time as Extra.
func (p *Plan) resume(now time.Time) {
	if p.Paused {
		p.Extra += now.Sub(p.PausedAt)
		p.Paused, p.PausedAt = false, time.Time{}
	}
}

// revealHint reveals the next hint of a scenario to everyone.
func (p *Plan) revealHint(scenario string) {
	if p.RevealedHints == nil {
		p.RevealedHints = map[string]int{}
	}
	p.RevealedHints[scenario]++
}

// Result events: what a learner's lab did when it posted the result.
const (
	EventStart    = "start"
	EventCheck    = "check"
	EventHint     = "hint"
	EventDiagnose = "diagnose"
)

// Who graded a check result.
const (
	// SourceServer: the class server graded the learner's namespace on its shared cluster itself.
	SourceServer = "server"
	// SourceSelf: the learner's lab graded the learner's own cluster and signed what it found. The signature
	// proves who sent it and that nothing changed on the way, not that the cluster was in that state.
	SourceSelf = "self-reported"
)

// CheckEvidence is one graded check as the grader saw it.
type CheckEvidence struct {
	Name   string `json:"name"`
	Points int    `json:"points"`
	Passed bool   `json:"passed"`
	// Collateral marks a check that must stay true rather than one the task asks for.
	Collateral bool   `json:"collateral,omitempty"`
	Evidence   string `json:"evidence,omitempty"`
}

// Bounds of a check result's evidence: a scenario has a handful of checks, each with a line or two.
const (
	maxChecks   = 100
	maxEvidence = 1000
)

// Result is one event of one learner on one scenario, as `lab` reports it.
type Result struct {
	Learner      string        `json:"learner"`
	Scenario     string        `json:"scenario"`
	Passed       bool          `json:"passed"`
	Score        int           `json:"score"`
	MaxScore     int           `json:"maxScore"`
	ChecksPassed int           `json:"checksPassed"`
	ChecksTotal  int           `json:"checksTotal"`
	TimeUsed     time.Duration `json:"timeUsedNs"`
	HintsTaken   int           `json:"hintsTaken"`
	Diagnosis    string        `json:"diagnosis,omitempty"`
	// DiagnosisCorrect is nil until the learner's diagnosis was graded.
	DiagnosisCorrect *bool  `json:"diagnosisCorrect,omitempty"`
	Event            string `json:"event"`
	// Checks are the checks of a check event, with the evidence of each.
	Checks []CheckEvidence `json:"checks,omitempty"`
	// Source is who graded a check event (SourceServer, SourceSelf); set by the server.
	Source string `json:"source,omitempty"`
	// At is stamped by the server on receipt, so results from machines with skewed clocks still order correctly.
	At time.Time `json:"at"`
}

// validate refuses results the scoreboard could not show truthfully; the learner was already checked by the caller.
func (r Result) validate(p Plan) error {
	switch {
	case !p.HasScenario(r.Scenario):
		return fmt.Errorf("scenario %q is not part of this class", r.Scenario)
	case !slices.Contains([]string{EventStart, EventCheck, EventHint, EventDiagnose}, r.Event):
		return fmt.Errorf("event %q is not one of start, check, hint, diagnose", r.Event)
	case r.Score < 0 || r.MaxScore < 0 || r.Score > r.MaxScore:
		return fmt.Errorf("score %d/%d is out of range", r.Score, r.MaxScore)
	case r.ChecksPassed < 0 || r.ChecksTotal < 0 || r.ChecksPassed > r.ChecksTotal:
		return fmt.Errorf("checks %d/%d are out of range", r.ChecksPassed, r.ChecksTotal)
	case r.TimeUsed < 0 || r.HintsTaken < 0:
		return errors.New("time used and hints taken cannot be negative")
	case r.Event == EventCheck:
		return r.consistent()
	}
	return nil
}

// consistent refuses a check result whose numbers are not what its own checks add up to: the evidence, the
// counts, the verdict and the score must agree, as a grader's output always does. (Hints cost points, and a
// correct diagnosis adds a bonus to both the score and the maximum.)
func (r Result) consistent() error {
	if len(r.Checks) == 0 || len(r.Checks) > maxChecks {
		return fmt.Errorf("a check result carries its checks and their evidence: 1 to %d, not %d", maxChecks, len(r.Checks))
	}
	passed, earned, points := 0, 0, 0
	for _, c := range r.Checks {
		switch {
		case c.Name == "":
			return errors.New("every check of a check result is named")
		case c.Points < 0:
			return fmt.Errorf("check %q has negative points", c.Name)
		case len(c.Evidence) > maxEvidence:
			return fmt.Errorf("the evidence of check %q is longer than %d bytes", c.Name, maxEvidence)
		case !c.Passed && c.Evidence == "":
			return fmt.Errorf("failed check %q carries no evidence", c.Name)
		}
		points += c.Points
		if c.Passed {
			passed++
			earned += c.Points
		}
	}
	bonus := r.MaxScore - points
	switch {
	case r.ChecksTotal != len(r.Checks) || r.ChecksPassed != passed:
		return fmt.Errorf("checks %d/%d do not match the %d of %d checks carried", r.ChecksPassed, r.ChecksTotal, passed, len(r.Checks))
	case r.Passed != (passed == len(r.Checks)):
		return fmt.Errorf("passed=%t does not match %d of %d checks passing", r.Passed, passed, len(r.Checks))
	case bonus < 0 || r.Score > earned+bonus:
		return fmt.Errorf("score %d/%d is more than the checks carried earn (%d of %d points)", r.Score, r.MaxScore, earned, points)
	}
	return nil
}

// start checks a new class's plan and fills in what the instructor may leave out: ID, title, start time.
func (p Plan) start(now time.Time) (Plan, error) {
	if len(p.Scenarios) == 0 {
		return Plan{}, errors.New("class plan has no scenarios")
	}
	seen := map[string]bool{}
	for _, s := range p.Scenarios {
		if s == "" || seen[s] {
			return Plan{}, fmt.Errorf("class plan scenarios must be named and distinct: %q", s)
		}
		seen[s] = true
	}
	if p.TimeLimit <= 0 {
		return Plan{}, errors.New("class plan needs a positive time limit")
	}
	if p.ClassID == "" {
		p.ClassID = "class-" + strings.ToLower(rand.Text()[:8])
	}
	if p.Title == "" {
		p.Title = "CKA class"
	}
	if p.StartedAt.IsZero() {
		p.StartedAt = now
	}
	p.Scenarios = slices.Clone(p.Scenarios)
	p.RevealedHints = maps.Clone(p.RevealedHints)
	if p.RevealedHints == nil {
		p.RevealedHints = map[string]int{}
	}
	return p, nil
}

// clone copies the plan so a change can be saved before the server adopts it.
func (p Plan) clone() Plan {
	p.Scenarios = slices.Clone(p.Scenarios)
	p.RevealedHints = maps.Clone(p.RevealedHints)
	return p
}
