package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/session"
)

// reportToClass sends the attempt as it stands after a check, hint or diagnose to the class this machine
// joined, if any and if the scenario is one of the class's. A failure is one warning line: the scoreboard
// never changes a grade or an exit code.
func reportToClass(ctx context.Context, f *Factory, event string, a *session.Attempt, out *grader.Outcome) {
	r := class.Result{Scenario: a.Scenario, Event: event, HintsTaken: a.Hints}
	if !a.Started.IsZero() {
		r.TimeUsed = time.Since(a.Started).Round(time.Second)
	}
	if d := a.Diagnosis; d != nil {
		r.Diagnosis, r.DiagnosisCorrect = d.String(), &d.Correct
	}
	if out != nil && a.LastCheck != nil {
		r.Passed, r.Score, r.MaxScore = a.LastCheck.Passed, a.LastCheck.Score, a.LastCheck.Max
		r.Checks, r.ChecksPassed, r.ChecksTotal = checksOf(out.Questions...)
	}
	postToClass(ctx, f, r)
}

// reportExamToClass sends every graded question of an exam class as a check of its scenario.
func reportExamToClass(ctx context.Context, f *Factory, rep *exam.Report, out *grader.Outcome) {
	var rs []class.Result
	for i, q := range rep.Questions {
		r := class.Result{Scenario: q.Scenario, Event: class.EventCheck, Passed: q.Passed, Score: q.Score, MaxScore: q.Max,
			TimeUsed: time.Duration(q.Seconds * float64(time.Second)).Round(time.Second)}
		if i < len(out.Questions) {
			r.Checks, r.ChecksPassed, r.ChecksTotal = checksOf(out.Questions[i])
		}
		rs = append(rs, r)
	}
	postToClass(ctx, f, rs...)
}

// checksOf is the evidence of every graded check, which the class server holds the reported score against.
func checksOf(qs ...grader.QuestionOutcome) (checks []class.CheckEvidence, passed, total int) {
	for _, q := range qs {
		for _, c := range q.Checks {
			checks = append(checks, class.CheckEvidence{Name: c.Name, Points: c.Points, Passed: c.Passed,
				Collateral: c.Group == grader.GroupCollateral, Evidence: c.Evidence})
			total++
			if c.Passed {
				passed++
			}
		}
	}
	return checks, passed, total
}

// postToClass posts results of the class's scenarios, from the cluster that joined the class, and warns once
// when the server does not take them.
func postToClass(ctx context.Context, f *Factory, rs ...class.Result) {
	local, err := joinedClass(f)
	if err != nil {
		return
	}
	j, err := local.Read()
	if err == nil && j != nil {
		err = j.Report(ctx, f.ClusterName, rs...)
	}
	if err != nil {
		fmt.Fprintf(f.ErrOut, "warning: result not sent to the class: %v\n", err)
	}
}
