package commands

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/examhost"
	"github.com/cka-lab/lab/internal/examweb"
	"github.com/cka-lab/lab/internal/session"
)

type examReviewOptions struct {
	html string

	review examweb.Review
}

func newExamReviewCmd(f *Factory) *cobra.Command {
	o := &examReviewOptions{}
	c := &cobra.Command{
		Use:   "review",
		Short: "Review the graded exam: per question the checks and their evidence, your writes, the coaching, the reference solution",
		Long: `review goes through the last graded exam question by question: its result and points, every check with
its evidence, your writes in the order the API server's audit log has them (and the host each came from),
the coaching on them, your notes from the exam's page, and the reference solution with why it is right.
--html writes the same as one self-contained HTML file, to keep or share; ` + "`lab exam open`" + ` shows it after
grading too. It reads lab's state directory only, so it works after ` + "`lab exam stop`" + ` as long as the cluster
is known to lab.`,
		Example: `  lab exam review
  lab exam review --html exam-review.html`,
		Args: cobra.NoArgs,
		RunE: runE(f, o),
	}
	c.Flags().StringVar(&o.html, "html", "", "write the review to this file as one self-contained HTML page")
	return c
}

func (o *examReviewOptions) complete(f *Factory, _ *cobra.Command, _ []string) error {
	st, err := f.Store()
	if err != nil {
		return err
	}
	rep, err := session.ReadExamReport(st, f.ClusterName)
	if err != nil {
		return err
	}
	if rep == nil {
		return fmt.Errorf("no graded exam on cluster %s: `lab exam grade` grades the one in progress", f.ClusterName)
	}
	notes, err := examweb.ReadNotes(session.ExamNotesFile(st, f.ClusterName, rep.Exam))
	if err != nil {
		return err
	}
	o.review = examweb.Review{Report: rep, Notes: notes}
	return nil
}

func (o *examReviewOptions) validate() error { return nil }

func (o *examReviewOptions) run(_ context.Context, f *Factory) error {
	if o.html == "" {
		printReview(f.Out, o.review)
		return nil
	}
	fh, err := os.Create(o.html)
	if err != nil {
		return fmt.Errorf("write the review: %w", err)
	}
	if err := examweb.WriteReview(fh, o.review); err != nil {
		_ = fh.Close()
		return err
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("write the review: %w", err)
	}
	fmt.Fprintf(f.ErrOut, "Review of exam %s written to %s\n", o.review.Report.Exam, o.html)
	return nil
}

// printReview prints the review as text: the report's table, then each question in full.
func printReview(w io.Writer, r examweb.Review) {
	green, red, bold := paint(w, color.FgGreen), paint(w, color.FgRed), paint(w, color.Bold)
	printReport(w, r.Report)
	for _, q := range r.Report.Questions {
		result := green("PASS")
		if !q.Passed {
			result = red("FAIL")
		}
		fmt.Fprintf(w, "\n%s  %s: %s, %.1f of %d (%d/%d points, %s on it)\n", bold(fmt.Sprintf("Q%d", q.Number)), cmp.Or(q.Title, q.Scenario), result, q.Credit, q.Weight, q.Score, q.Max,
			clock(time.Duration(q.Seconds*float64(time.Second))))
		if len(q.Checks) > 0 {
			fmt.Fprintln(w, "  Checks:")
			for _, c := range q.Checks {
				mark := green("✓")
				if !c.Passed {
					mark = red("✗")
				}
				fmt.Fprintf(w, "    %s %s (%d/%d): %s\n", mark, c.Name, c.Earned, c.Points, c.Evidence)
			}
		}
		if tl := q.Timeline; tl != nil && len(tl.Log) > 0 {
			fmt.Fprintln(w, "  Your writes (from the API server's audit log):")
			for _, wr := range tl.Log {
				where := ""
				if host := examhost.HostOf(wr.User); host != "" {
					where = "on " + host + ": "
				}
				ns := ""
				if wr.Namespace != "" {
					ns = " in " + wr.Namespace
				}
				fmt.Fprintf(w, "    %s  %s%s %s%s\n", examweb.WriteAt(tl, wr), where, wr.Verb, wr.Object, ns)
			}
			for _, n := range tl.WrongTurns {
				fmt.Fprintf(w, "    coaching: %s\n", n.Message)
			}
		}
		if n := r.Notes[q.Number]; n.Text != "" {
			fmt.Fprintf(w, "  Your notes:\n    %s\n", strings.ReplaceAll(strings.TrimSpace(n.Text), "\n", "\n    "))
		}
		if q.Why != "" {
			fmt.Fprintf(w, "  Why: %s\n", q.Why)
		}
		if len(q.Solution) > 0 {
			fmt.Fprintln(w, "  Reference solution:")
			for _, s := range q.Solution {
				fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(s, "\n", "\n    "))
			}
		}
	}
}
