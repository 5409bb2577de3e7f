package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/internal/state/history"
	"github.com/cka-lab/lab/scenarios"
)

type checkOptions struct {
	output string
	junit  string
	wait   time.Duration
}

func newCheckCmd(f *Factory) *cobra.Command {
	o := &checkOptions{}
	c := &cobra.Command{
		Use:   "check",
		Short: "Grade your fix against the live cluster (exit 0 only on a full pass)",
		Example: `  lab check
  lab check -o json
  lab check --junit report.xml --wait 0s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(o.output); err != nil {
				return err
			}
			if !cmd.Flags().Changed("wait") {
				o.wait = -1
			}
			return o.run(cmd.Context(), f)
		},
	}
	c.Flags().StringVarP(&o.output, "output", "o", "", "output format: json")
	c.Flags().StringVar(&o.junit, "junit", "", "also write a JUnit report to this file")
	c.Flags().DurationVar(&o.wait, "wait", 0, "how long to wait for the cluster to converge (default: the scenario's)")
	return c
}

func (o *checkOptions) run(ctx context.Context, f *Factory) error {
	sess, err := f.Session(ctx)
	if err != nil {
		return err
	}
	a, inst, err := currentInstance(f, sess)
	if err != nil {
		return err
	}
	plan := grader.Plan{Cluster: sess.Cluster.Name, Questions: []grader.Question{grader.QuestionFor(inst, o.wait)}}
	dir := sess.CheckDir()
	var out *grader.Outcome
	status := f.Status()
	err = status.Step(fmt.Sprintf("Grading %s (until the cluster converges, at most %s)", inst.ID, plan.Questions[0].Settle), func() error {
		var err error
		out, err = grader.RunChild(ctx, sess.Self, plan, dir, []string{"LAB_CLUSTER=" + sess.Cluster.Name}, func(p grader.Progress) {
			status.Update(progressLine(p))
		})
		return err
	})
	if err != nil {
		return err
	}
	bonus := diagnosisBonus(a)
	score, maxScore := max(out.Score-a.Hints*HintCost, 0)+bonus, out.Max+bonus
	a.LastCheck = &session.CheckNote{At: time.Now().UTC(), Passed: out.Passed, Score: score, Max: maxScore}
	if err := sess.Save(a); err != nil {
		return err
	}
	recordHistory(f, attemptRecord(history.EventCheck, a, inst.Stage))
	reportToClass(ctx, f, class.EventCheck, a, out)
	if o.junit != "" {
		if err := copyFile(out.JUnitReport, o.junit); err != nil {
			return err
		}
	}
	if o.output == "json" {
		if err := json.NewEncoder(f.Out).Encode(struct {
			*grader.Outcome
			Hints          int `json:"hints"`
			DiagnosisBonus int `json:"diagnosisBonus"`
			FinalScore     int `json:"finalScore"`
			FinalMax       int `json:"finalMax"`
		}{out, a.Hints, bonus, score, maxScore}); err != nil {
			return err
		}
	} else {
		printOutcome(f, out, a, score, maxScore)
	}
	if !out.Passed {
		return &ExitError{Code: 1, Silent: true, Err: errors.New("not passed")}
	}
	return nil
}

// currentInstance returns the attempt in progress and its scenario instance.
func currentInstance(f *Factory, sess *session.Session) (*session.Attempt, *scenarios.Instance, error) {
	a, err := sess.Current()
	if err != nil {
		return nil, nil, err
	}
	if a == nil {
		return nil, nil, fmt.Errorf("no scenario is running on cluster %s: start one with `lab start <scenario>` (see `lab list`)", sess.Cluster.Name)
	}
	if a.Phase != session.PhaseActive {
		return nil, nil, fmt.Errorf("scenario %s did not finish starting (%s): run `lab reset`, then `lab start %s` again", a.Scenario, a.Phase, a.Scenario)
	}
	cat, err := f.Catalog()
	if err != nil {
		return nil, nil, err
	}
	inst, err := sess.Instance(cat, a)
	return a, inst, err
}

func printOutcome(f *Factory, out *grader.Outcome, a *session.Attempt, score, maxScore int) {
	green, red, dim := color.New(color.FgGreen).SprintFunc(), color.New(color.FgRed).SprintFunc(), color.New(color.Faint).SprintFunc()
	for _, q := range out.Questions {
		fmt.Fprintf(f.Out, "\n%s\n", q.Title)
		for _, c := range q.Checks {
			mark := green("✓")
			if !c.Passed {
				mark = red("✗")
			}
			group := ""
			if c.Group == grader.GroupCollateral {
				group = dim(" (must stay true)")
			}
			fmt.Fprintf(f.Out, "  %s %s%s  %d/%d\n", mark, c.Name, group, c.Earned, c.Points)
			if !c.Passed {
				stage := ""
				if c.Stage != "" {
					stage = fmt.Sprintf(" [stopped at: %s]", c.Stage)
				}
				fmt.Fprintf(f.Out, "      %s%s\n", c.Evidence, stage)
			}
		}
		switch {
		case q.Passed:
			fmt.Fprintf(f.Out, "  %s every handoff passes: the Pod's journey reaches Running + Ready\n", green("PASS"))
		case q.OverBroad:
			fmt.Fprintf(f.Out, "  %s the task's checks pass, but the fix went too far: see the checks that must stay true\n", red("FAIL"))
		case q.StoppedAt != "":
			fmt.Fprintf(f.Out, "  %s the journey still stops at: %s\n", red("FAIL"), q.StoppedAt)
		default:
			fmt.Fprintf(f.Out, "  %s see the failing checks above\n", red("FAIL"))
		}
		if st := q.Settled; st != nil && st.Reason == "window" && len(st.WaitingFor) > 0 {
			fmt.Fprintf(f.Out, "  %s\n", dim(fmt.Sprintf("graded when the wait ran out after %.0fs, the cluster still changing: %s",
				float64(st.Waited), strings.Join(st.WaitingFor, "; "))))
		}
	}
	penalty := ""
	if a.Hints > 0 {
		penalty = fmt.Sprintf(" (%d/%d minus %d for %d hint(s))", out.Score, out.Max, a.Hints*HintCost, a.Hints)
	}
	pct := 0
	if maxScore > 0 {
		pct = score * 100 / maxScore
	}
	fmt.Fprintln(f.Out)
	printDiagnosis(f.Out, a)
	fmt.Fprintf(f.Out, "Score: %d/%d (%d%%)%s\n", score, maxScore, pct, penalty)
	fmt.Fprintf(f.ErrOut, "%s\n", dim("reports: "+strings.Join([]string{out.JSONReport, out.JUnitReport}, " ")))
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// progressLine is the live line while grading waits: what the cluster is still doing, and the checks so far.
func progressLine(p grader.Progress) string {
	line := fmt.Sprintf("%d of %d checks pass", p.Passing, p.Checks)
	if len(p.WaitingFor) > 0 {
		line = "waiting for " + p.WaitingFor[0]
		if len(p.WaitingFor) > 1 {
			line += fmt.Sprintf(" (+%d more)", len(p.WaitingFor)-1)
		}
		line += fmt.Sprintf("; %d of %d checks pass", p.Passing, p.Checks)
	}
	return line
}
