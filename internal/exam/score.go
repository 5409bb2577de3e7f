package exam

import (
	"fmt"
	"math"
	"time"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/coach"
	"github.com/cka-lab/lab/internal/journey"
)

// PassMark is the CKA's pass mark, in percent of the total weight.
const PassMark = 66

// Question is what the exam knows about one question besides its grade.
type Question struct {
	Number   int
	Scenario string
	Stage    journey.Stage
	Weight   int
	Flagged  bool
	Spent    time.Duration
	// Solution and Why are the question's reference solution and why it is right, for the review.
	Solution []string
	Why      string
}

// QuestionReport is one graded question.
type QuestionReport struct {
	Number   int           `json:"number"`
	Scenario string        `json:"scenario"`
	Title    string        `json:"title"`
	Stage    journey.Stage `json:"stage"`
	Weight   int           `json:"weight"`
	Passed   bool          `json:"passed"`
	// Score and Max are the grader's points for every check; TaskScore and TaskMax only the task's checks.
	Score     int  `json:"score"`
	Max       int  `json:"max"`
	TaskScore int  `json:"taskScore"`
	TaskMax   int  `json:"taskMax"`
	OverBroad bool `json:"overBroad"`
	// Credit is the share of the weight earned.
	Credit    float64       `json:"credit"`
	StoppedAt journey.Stage `json:"stoppedAt,omitempty"`
	Failing   []string      `json:"failing,omitempty"`
	Flagged   bool          `json:"flagged"`
	Seconds   float64       `json:"seconds"`
	// Timeline is the question's part of the learner's writes, from the audit log; nil without writes or log.
	Timeline *coach.Timeline `json:"timeline,omitempty"`
	// WrongHost says why a question that passed earned nothing: its fix was made from another exam host.
	WrongHost string `json:"wrongHost,omitempty"`
	// Checks are the grader's checks with their evidence, and Solution and Why the reference solution and
	// why it is right: the review reads them from the report, which outlives the exam's record.
	Checks   []grader.CheckOutcome `json:"checks,omitempty"`
	Solution []string              `json:"solution,omitempty"`
	Why      string                `json:"why,omitempty"`
}

// FixedOnWrongHost scores the question as the exam does a fix made on the wrong host, which never reaches
// the question's cluster there: 0, saying why. The report's totals need Total again.
func (qr *QuestionReport) FixedOnWrongHost(why string) {
	qr.Passed, qr.Credit, qr.WrongHost = false, 0, why
	qr.Failing = append([]string{why}, qr.Failing...)
}

// Report is a graded exam.
type Report struct {
	Exam      string           `json:"exam"`
	Graded    time.Time        `json:"graded"`
	Percent   float64          `json:"percent"`
	PassMark  int              `json:"passMark"`
	Passed    bool             `json:"passed"`
	Weight    int              `json:"weight"`
	Credit    float64          `json:"credit"`
	Seconds   float64          `json:"seconds"`
	Questions []QuestionReport `json:"questions"`
	// Survive is what each disturbance after grading undid (the evidence of the checks it failed names it).
	Survive []grader.Survived `json:"survive,omitempty"`
	// Coaching notes the learner's writes that no question involves.
	Coaching []coach.Note `json:"coaching,omitempty"`
}

// Score grades an exam from the grader's outcome. A question earns its weight in proportion to the task
// checks it passes, as the CKA gives partial credit; a failed collateral check (a fix that broke what the task
// protects, or went too far) earns it nothing, and the collateral checks never earn credit on their own, so an
// untouched question scores 0 however much of the cluster it left intact.
func Score(id string, qs []Question, out *grader.Outcome, used time.Duration, now time.Time) Report {
	byID := map[string]grader.QuestionOutcome{}
	if out != nil {
		for _, q := range out.Questions {
			byID[q.ID] = q
		}
	}
	rep := Report{Exam: id, Graded: now.UTC(), PassMark: PassMark, Seconds: used.Seconds()}
	if out != nil {
		rep.Survive = out.Survive
	}
	for _, q := range qs {
		qr := QuestionReport{Number: q.Number, Scenario: q.Scenario, Stage: q.Stage, Weight: q.Weight, Flagged: q.Flagged, Seconds: q.Spent.Seconds(),
			Solution: q.Solution, Why: q.Why}
		o, ok := byID[q.Scenario]
		if !ok {
			qr.Failing = []string{"not graded"}
		} else {
			qr.fill(o)
		}
		rep.Questions = append(rep.Questions, qr)
	}
	rep.Total()
	return rep
}

// Total adds up the questions' weights and credits and decides the pass.
func (r *Report) Total() {
	r.Weight, r.Credit, r.Percent = 0, 0, 0
	for _, q := range r.Questions {
		r.Weight += q.Weight
		r.Credit += q.Credit
	}
	if r.Weight > 0 {
		r.Percent = math.Round(1000*r.Credit/float64(r.Weight)) / 10
	}
	r.Passed = r.Percent >= PassMark
}

func (qr *QuestionReport) fill(o grader.QuestionOutcome) {
	qr.Title, qr.Passed, qr.Score, qr.Max, qr.OverBroad = o.Title, o.Passed, o.Score, o.Max, o.OverBroad
	qr.StoppedAt, qr.Checks = o.StoppedAt, o.Checks
	collateralFailed := false
	for _, c := range o.Checks {
		if c.Group == grader.GroupChecks {
			qr.TaskScore += c.Earned
			qr.TaskMax += c.Points
		}
		if !c.Passed {
			collateralFailed = collateralFailed || c.Group == grader.GroupCollateral
			qr.Failing = append(qr.Failing, fmt.Sprintf("%s: %s", c.Name, c.Evidence))
		}
	}
	if qr.TaskMax > 0 && !collateralFailed {
		qr.Credit = float64(qr.Weight) * float64(qr.TaskScore) / float64(qr.TaskMax)
	}
}
