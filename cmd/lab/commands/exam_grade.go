package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/internal/state/history"
	"github.com/cka-lab/lab/scenarios"
)

// examReportFile keeps the last exam's report next to its record, for `lab exam status` after grading.
const examReportFile = "exam-report.json"

type reportOptions struct {
	output string
	junit  string
}

func (o *reportOptions) flags(c *cobra.Command) {
	c.Flags().StringVarP(&o.output, "output", "o", "", "output format: json")
	c.Flags().StringVar(&o.junit, "junit", "", "also write the report as JUnit XML to this file")
}

// show prints the report and writes the JUnit file; with failing set, a report below the pass mark exits 1,
// like a failed check.
func (o *reportOptions) show(f *Factory, rep *exam.Report, failing bool) error {
	if o.junit != "" {
		if err := writeJUnit(o.junit, rep); err != nil {
			return err
		}
	}
	if o.output == "json" {
		if err := json.NewEncoder(f.Out).Encode(rep); err != nil {
			return err
		}
	} else {
		printReport(f.Out, rep)
	}
	if failing && !rep.Passed {
		return &ExitError{Code: 1, Silent: true, Err: errors.New("exam not passed")}
	}
	return nil
}

func writeJUnit(path string, rep *exam.Report) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write JUnit report: %w", err)
	}
	if err := exam.WriteJUnit(fh, *rep); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

func newExamGradeCmd(f *Factory) *cobra.Command {
	o := &reportOptions{}
	c := &cobra.Command{
		Use:   "grade",
		Short: "End the exam and grade every question (exit 0 only at the pass mark or above)",
		Example: `  lab exam grade
  lab exam grade -o json --junit exam.xml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(o.output); err != nil {
				return err
			}
			sess, e, insts, unlock, err := examSession(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer unlock()
			rep, err := gradeExam(cmd.Context(), f, sess, e, insts)
			if err != nil {
				return err
			}
			return o.show(f, rep, true)
		},
	}
	o.flags(c)
	return c
}

// gradeExam stops the clock, grades all questions in one grading run, scores them, marks the exam graded and
// records each question in the learner's history.
func gradeExam(ctx context.Context, f *Factory, sess *session.Session, e *session.Exam, insts []*scenarios.Instance) (*exam.Report, error) {
	now := time.Now().UTC()
	e.StopClock(now)
	var out *grader.Outcome
	err := f.Status().Step(fmt.Sprintf("Grading %d question(s)", len(insts)), func() error {
		var err error
		out, err = sess.GradeExam(ctx, e, insts)
		return err
	})
	if err != nil {
		return nil, err
	}
	end := now
	if end.After(e.Deadline()) {
		end = e.Deadline()
	}
	var qs []exam.Question
	for i, q := range e.Questions {
		qs = append(qs, exam.Question{Number: i + 1, Scenario: q.Scenario, Stage: insts[i].Stage, Weight: q.Weight, Flagged: q.Flagged, Spent: q.Spent})
	}
	rep := exam.Score(e.ID, qs, out, end.Sub(e.Started), now)
	e.Phase, e.Graded = session.PhaseGraded, now
	if err := sess.SaveExam(e); err != nil {
		return nil, err
	}
	if err := sess.Store.Write(sess.Cluster.Name, examReportFile, rep); err != nil {
		return nil, err
	}
	var recs []history.Record
	for i, q := range rep.Questions {
		recs = append(recs, history.Record{
			At: now, Event: history.EventExam, Scenario: q.Scenario, Stage: q.Stage, Seed: e.Questions[i].Seed, Started: e.Started,
			Passed: q.Passed, Score: q.Score, Max: q.Max, Graded: true, Seconds: q.Seconds, Exam: e.ID,
		})
	}
	recordHistory(f, recs...)
	reportExamToClass(ctx, f, &rep, out)
	return &rep, nil
}

func newExamStopCmd(f *Factory) *cobra.Command {
	o := &reportOptions{}
	var discard bool
	c := &cobra.Command{
		Use:   "stop",
		Short: "End the exam: grade it if it is not graded yet, then reset the cluster to its baseline",
		Example: `  lab exam stop
  lab exam stop --discard      # no grade, nothing recorded`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(o.output); err != nil {
				return err
			}
			sess, unlock, err := lockedSession(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer unlock()
			e, insts, err := loadExam(f, sess)
			if err != nil {
				return err
			}
			var rep *exam.Report
			if e.Running() && !discard {
				if rep, err = gradeExam(cmd.Context(), f, sess, e, insts); err != nil {
					return err
				}
			}
			if err := stopExam(cmd.Context(), f, sess, e); err != nil {
				return err
			}
			if rep == nil {
				return nil
			}
			return o.show(f, rep, false)
		},
	}
	o.flags(c)
	c.Flags().BoolVar(&discard, "discard", false, "reset without grading or recording the exam")
	return c
}

// stopExam resets the cluster and forgets the exam. A practice attempt started after a graded exam has
// already reset the exam's faults, and is left alone.
func stopExam(ctx context.Context, f *Factory, sess *session.Session, e *session.Exam) error {
	if a, err := sess.Current(); err != nil {
		return err
	} else if a != nil && e.Phase == session.PhaseGraded {
		return sess.ForgetExam()
	}
	residue, err := sess.StopExam(ctx)
	if err != nil {
		return err
	}
	for _, r := range residue {
		fmt.Fprintf(f.ErrOut, "  residue: %s\n", r)
	}
	if len(residue) > 0 {
		return fmt.Errorf("the cluster still differs from its baseline in %d place(s); run `lab exam stop` again", len(residue))
	}
	fmt.Fprintf(f.ErrOut, "Cluster %s matches its baseline; the exam is over.\n", sess.Cluster.Name)
	return nil
}
