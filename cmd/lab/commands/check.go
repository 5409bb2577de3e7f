package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/coach"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/internal/survive"
	"github.com/cka-lab/lab/scenarios"
)

type checkOptions struct {
	out     outputFlags
	junit   string
	wait    time.Duration
	survive bool
}

func newCheckCmd(f *Factory) *cobra.Command {
	o := &checkOptions{}
	c := &cobra.Command{
		Use:   "check",
		Short: "Grade your fix against the live cluster (exit 0 only on a full pass)",
		Example: `  lab check
  lab check -o json
  lab check --junit report.xml --wait 0s
  lab check --survive   # then delete the Pods, restart what the scenario touched, and grade again`,
		Args: cobra.NoArgs,
		RunE: runE(f, o),
	}
	o.out.addFlags(c)
	c.Flags().StringVar(&o.junit, "junit", "", "also write a JUnit report to this file")
	c.Flags().DurationVar(&o.wait, "wait", 0, "how long to wait for the cluster to converge (default: the scenario's)")
	c.Flags().BoolVar(&o.survive, "survive", false, "once the task's checks pass, delete the workloads' Pods and restart the kubelet, containerd or static Pods the scenario touched, and grade again: a fix they undo fails")
	return c
}

func (o *checkOptions) complete(_ *Factory, cmd *cobra.Command, _ []string) error {
	if !cmd.Flags().Changed("wait") {
		o.wait = -1
	}
	return nil
}

func (o *checkOptions) validate() error { return o.out.validate() }

// checkJSON is `lab check -o json`: the grader's outcome with the score the learner gets.
type checkJSON struct {
	*grader.Outcome
	Hints          int `json:"hints"`
	DiagnosisBonus int `json:"diagnosisBonus"`
	FinalScore     int `json:"finalScore"`
	FinalMax       int `json:"finalMax"`
	// Coaching is what a coach would say of how the fix was made, from the API server's audit log.
	Coaching []coach.Note `json:"coaching"`
}

func (o *checkOptions) run(ctx context.Context, f *Factory) error {
	// The lock is held from reading the attempt to saving its grade, rather than taken again to re-read it
	// before the save: grading must not see a reset or start change the cluster under it, nor --survive
	// restart the kubelet under another command, and a hint taken meanwhile waits instead of being lost.
	sess, unlock, err := lockedSession(ctx, f)
	if err != nil {
		return err
	}
	defer unlock()
	a, inst, err := currentInstance(ctx, f, sess)
	if err != nil {
		return err
	}
	res, err := sess.Check(ctx, a, inst, o.wait, o.survive, func(p grader.Progress) { sess.Status.Update(progressLine(p)) })
	if err != nil {
		return err
	}
	out, score := res.Outcome, res.Score
	notes := coaching(ctx, f, sess, a, inst)
	reportToClass(ctx, f, class.EventCheck, a, out)
	if o.junit != "" {
		if err := copyFile(out.JUnitReport, o.junit); err != nil {
			return err
		}
	}
	err = o.out.print(f.Out, checkJSON{out, score.Hints, score.Bonus, score.Final, score.FinalMax, notes}, func() error {
		printOutcome(f, out, a, score, notes)
		return nil
	})
	if err != nil {
		return err
	}
	if !out.Passed {
		return &ExitError{Code: 1, Silent: true, Err: errors.New("not passed")}
	}
	return nil
}

// currentInstance returns the attempt in progress and its scenario instance.
func currentInstance(ctx context.Context, f *Factory, sess *session.Session) (*session.Attempt, *scenarios.Instance, error) {
	cat, err := f.Catalog()
	if err != nil {
		return nil, nil, err
	}
	return sess.Active(ctx, cat)
}

// coaching returns the attempt's coaching notes, never nil. Coaching is advice beside the grade: a cluster
// without an audit log, or a log that could not be read, gets none and one quiet line on stderr.
func coaching(ctx context.Context, f *Factory, sess *session.Session, a *session.Attempt, inst *scenarios.Instance) []coach.Note {
	dim := color.New(color.Faint).SprintFunc()
	notes, found, err := sess.Coaching(ctx, a, inst)
	switch {
	case err != nil:
		fmt.Fprintf(f.ErrOut, "%s\n", dim("no coaching: "+err.Error()))
	case !found:
		fmt.Fprintf(f.ErrOut, "%s\n", dim("no coaching: this cluster keeps no audit log (it was created before lab kept one)"))
	}
	if notes == nil {
		notes = []coach.Note{}
	}
	return notes
}

func printOutcome(f *Factory, out *grader.Outcome, a *session.Attempt, score session.Score, notes []coach.Note) {
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
	printSurvived(f.Out, out.Survive)
	penalty := ""
	if score.Hints > 0 {
		penalty = fmt.Sprintf(" (%d/%d minus %d for %d hint(s))", score.Earned, score.Max, score.Penalty(), score.Hints)
	}
	fmt.Fprintln(f.Out)
	if d := a.Diagnosis; d != nil {
		fmt.Fprintf(f.Out, "Diagnosis: %s (%s, +%d)\n", d.Stage, map[bool]string{true: "correct", false: "wrong"}[d.Correct], score.Bonus)
	}
	fmt.Fprintf(f.Out, "Score: %d/%d (%d%%)%s\n", score.Final, score.FinalMax, score.Percent(), penalty)
	if len(notes) > 0 {
		fmt.Fprintln(f.Out, "Coaching (how the fix was made; the score does not count it):")
		for _, n := range notes {
			fmt.Fprintf(f.Out, "  • %s\n", n.Message)
		}
	}
	fmt.Fprintf(f.ErrOut, "%s\n", dim("reports: "+strings.Join([]string{out.JSONReport, out.JUnitReport}, " ")))
}

// printSurvived lists what each disturbance after grading did to the fix.
func printSurvived(w io.Writer, ss []grader.Survived) {
	if len(ss) == 0 {
		return
	}
	green, red := paint(w, color.FgGreen), paint(w, color.FgRed)
	fmt.Fprintf(w, "\nSurvive (what the cluster does on its own, graded again after each):\n")
	for _, s := range ss {
		mark := green("✓")
		if len(s.Undid) > 0 {
			mark = red("✗")
		}
		fmt.Fprintf(w, "  %s %s\n", mark, survive.Describe(s))
	}
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
