package grader

import (
	"fmt"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gcustom"
)

// Report files a grading run writes into its directory.
const (
	JSONReport  = "report.json"
	JUnitReport = "junit.xml"
)

type testingT struct{ failed bool }

func (t *testingT) Fail() { t.failed = true }

// hold matches a check result that passed; its failure message is the evidence.
var hold = gcustom.MakeMatcher(func(r Result) (bool, error) { return r.OK, nil }).
	WithTemplate("{{.Actual.Evidence}} [stage: {{.Actual.Stage}}]")

// Grade grades plan as a ginkgo suite, one ordered container per question and one spec per check, and writes
// ginkgo's JSON and JUnit reports into dir. Ginkgo runs a suite once per process, so `lab check` runs this in a
// child process. It returns whether every check passed.
func Grade(plan Plan, env Env, dir string, color bool, progress func(Progress)) bool {
	RegisterFailHandler(Fail)
	for _, q := range plan.Questions {
		describe(q, env, progress)
	}
	suite, reporter := GinkgoConfiguration()
	suite.Timeout = 30 * time.Minute
	reporter.JSONReport = filepath.Join(dir, JSONReport)
	reporter.JUnitReport = filepath.Join(dir, JUnitReport)
	reporter.NoColor = !color
	reporter.Succinct = true
	t := &testingT{}
	RunSpecs(t, "lab check", suite, reporter)
	return !t.failed
}

func describe(q Question, env Env, progress func(Progress)) {
	env.Stage, env.Shown = q.Stage, q.Shown
	Describe(fmt.Sprintf("%s: %s", q.ID, q.Title), Ordered, ContinueOnFailure, Label(q.ID), func() {
		var settled []Result
		var took []time.Duration
		var held, converged bool
		// In an ordered container the BeforeAll runs inside the first spec, so every spec's timeout must also
		// cover the settling, or a settle longer than the spec timeout fails the first check for nothing.
		BeforeAll(func(ctx SpecContext) {
			var st Settled
			settled, took, st = settle(ctx, env, q, progress)
			held, converged = st.Reason == "every check holds", st.Converged
			AddReportEntry("settle", st, ReportEntryVisibilityNever)
		}, NodeTimeout(q.Settle+time.Minute))
		for i, p := range q.Checks {
			It(p.Check.Name, Label(p.Group, fmt.Sprintf("points=%d", p.Check.Points)), func(ctx SpecContext) {
				last := settled[i]
				defer func() { AddReportEntry("result", last, ReportEntryVisibilityNever) }()
				// Settle has just seen every check pass holdRounds rounds in a row against the cluster, or the
				// results hold still on a converged cluster; polling each again, one spec after another, would
				// only add a quarter second per check.
				if held {
					return
				}
				// A verdict given on a converged cluster stands as settle saw it: the results had stopped changing.
				if converged {
					Expect(last).To(hold)
					return
				}
				// Otherwise a check that failed to settle has had its wait; a passing one must keep passing.
				// Either way the timeout leaves room for the two evaluations MustPassRepeatedly needs, however
				// slow the check is (a kubectl run inside a node on a busy host takes seconds).
				timeout := 3 * time.Second
				if !settled[i].OK {
					timeout = time.Second
				}
				timeout += 3 * took[i]
				Eventually(ctx, func(g Gomega) {
					last = Evaluate(ctx, env, p.Check)
					g.Expect(last).To(hold)
				}).WithTimeout(timeout).WithPolling(250 * time.Millisecond).MustPassRepeatedly(2).Should(Succeed())
			}, SpecTimeout(q.Settle+2*time.Minute))
		}
	})
}

// specLabel returns the value of a "key=value" label.
func specLabel(r types.SpecReport, key string) string {
	for _, l := range r.Labels() {
		if len(l) > len(key) && l[:len(key)+1] == key+"=" {
			return l[len(key)+1:]
		}
	}
	return ""
}
