package commands

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/scenarios"
)

type reportOptions struct {
	out   outputFlags
	junit string
	// survive puts the passing fixes through the cluster's own disturbances before scoring them.
	survive bool
}

func (o *reportOptions) flags(c *cobra.Command) {
	o.out.addFlags(c)
	c.Flags().StringVar(&o.junit, "junit", "", "also write the report as JUnit XML to this file")
	c.Flags().BoolVar(&o.survive, "survive", true, "after grading, delete the workloads' Pods and restart what the questions touched on nodes, and grade again (--survive=false skips it)")
}

// show prints the report and writes the JUnit file; with failing set, a report below the pass mark exits 1,
// like a failed check.
func (o *reportOptions) show(f *Factory, rep *exam.Report, failing bool) error {
	if o.junit != "" {
		if err := writeJUnit(o.junit, rep); err != nil {
			return err
		}
	}
	err := o.out.print(f.Out, rep, func() error {
		printReport(f.Out, rep)
		return nil
	})
	if err != nil {
		return err
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
		_ = fh.Close()
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
  lab exam grade -o json --junit exam.xml
  lab exam grade --survive=false   # grade without disturbing the fixes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.out.validate(); err != nil {
				return err
			}
			sess, e, insts, unlock, err := examSession(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer unlock()
			rep, err := gradeExam(cmd.Context(), f, sess, e, insts, o.survive)
			if err != nil {
				return err
			}
			return o.show(f, rep, true)
		},
	}
	o.flags(c)
	return c
}

// gradeExam grades the exam (with disturb, the fixes must survive the cluster's own disturbances) and tells
// the class, if the learner joined one.
func gradeExam(ctx context.Context, f *Factory, sess *session.Session, e *session.Exam, insts []*scenarios.Instance, disturb bool) (*exam.Report, error) {
	rep, out, err := sess.GradeExam(ctx, e, insts, disturb)
	if err != nil {
		return nil, err
	}
	reportExamToClass(ctx, f, rep, out)
	return rep, nil
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
			if err := o.out.validate(); err != nil {
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
				if rep, err = gradeExam(cmd.Context(), f, sess, e, insts, o.survive); err != nil {
					return err
				}
			}
			residue, reset, err := sess.EndExam(cmd.Context(), e)
			if err != nil {
				return err
			}
			for _, r := range residue {
				fmt.Fprintf(f.ErrOut, "  residue: %s\n", r)
			}
			if len(residue) > 0 {
				return fmt.Errorf("the cluster still differs from its baseline in %d place(s); run `lab exam stop` again", len(residue))
			}
			if reset {
				fmt.Fprintf(f.ErrOut, "Cluster %s matches its baseline; the exam is over.\n", sess.Cluster.Name)
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
