package commands

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/scenarios"
)

// examQuestionJSON carries each question's seed and values, as `lab status -o json` does an attempt's, so a
// script can rebuild its instance.
type examQuestionJSON struct {
	Number   int               `json:"number"`
	Scenario string            `json:"scenario"`
	Title    string            `json:"title"`
	Weight   int               `json:"weight"`
	Host     string            `json:"host,omitempty"`
	Cluster  string            `json:"cluster"`
	Flagged  bool              `json:"flagged"`
	Current  bool              `json:"current"`
	Seconds  float64           `json:"seconds"`
	Seed     int64             `json:"seed"`
	Values   map[string]string `json:"values"`
}

type examStatusJSON struct {
	Cluster     string             `json:"cluster"`
	Exam        string             `json:"exam"`
	Phase       session.Phase      `json:"phase"`
	Seed        int64              `json:"seed"`
	Started     time.Time          `json:"started"`
	Deadline    time.Time          `json:"deadline"`
	LeftSeconds float64            `json:"leftSeconds"`
	Current     int                `json:"current"`
	Questions   []examQuestionJSON `json:"questions"`
	Report      *exam.Report       `json:"report,omitempty"`
}

func newExamStatusCmd(f *Factory) *cobra.Command {
	var out outputFlags
	c := &cobra.Command{
		Use:     "status",
		Short:   "Show the exam's questions, weights, flags, time per question and time left, and the current task",
		Example: "  lab exam status\n  lab exam status -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			sess, err := f.Session(cmd.Context())
			if err != nil {
				return err
			}
			e, insts, err := loadExam(f, sess)
			if err != nil {
				return err
			}
			var rep *exam.Report
			if e.Phase == session.PhaseGraded {
				if rep, err = sess.ExamReport(); err != nil {
					return err
				}
			}
			now := time.Now().UTC()
			return out.print(f.Out, statusJSON(sess.Cluster.Name, e, insts, rep, now), func() error {
				if e.Phase == session.PhaseGraded {
					if rep != nil {
						printReport(f.Out, rep)
					}
					fmt.Fprintln(f.Out, "\nThe exam has ended; `lab exam stop` resets the cluster.")
					return nil
				}
				if err := requireRunning(sess, e); err != nil {
					return err
				}
				printExamTable(f.Out, e, insts, now)
				printQuestion(f.Out, e, insts, sess.Cluster.Kubeconfig)
				return nil
			})
		},
	}
	out.addFlags(c)
	return c
}

func statusJSON(cluster string, e *session.Exam, insts []*scenarios.Instance, rep *exam.Report, now time.Time) examStatusJSON {
	out := examStatusJSON{Cluster: cluster, Exam: e.ID, Phase: e.Phase, Seed: e.Seed, Started: e.Started, Deadline: e.Deadline(),
		Current: e.Current + 1, Report: rep}
	if e.Running() {
		out.LeftSeconds = e.Left(now).Seconds()
	}
	for i, q := range e.Questions {
		on := cmp.Or(q.Cluster, cluster)
		out.Questions = append(out.Questions, examQuestionJSON{i + 1, q.Scenario, insts[i].Title, q.Weight, q.Host, on, q.Flagged, i == e.Current,
			e.SpentOn(i, now).Seconds(), q.Seed, q.Values})
	}
	return out
}

func printExamOverview(w io.Writer, e *session.Exam, insts []*scenarios.Instance) {
	total := 0
	for _, q := range e.Questions {
		total += q.Weight
	}
	fmt.Fprintf(w, "\nExam %s: %d questions worth %d in all, %s, ends at %s. Pass mark: %d%%.\n",
		e.ID, len(e.Questions), total, shortDuration(e.Duration), e.Deadline().Local().Format("15:04"), exam.PassMark)
	printExamTable(w, e, insts, e.Started)
}

func printExamTable(w io.Writer, e *session.Exam, insts []*scenarios.Instance, now time.Time) {
	if e.Running() {
		fmt.Fprintf(w, "Question %d/%d, %s left\n", e.Current+1, len(e.Questions), clock(e.Left(now)))
	}
	t := newTable(w)
	t.AppendHeader(row("", "#", "HOST", "WEIGHT", "FLAG", "TIME", "TITLE"))
	for i, q := range e.Questions {
		cur, flag := "", ""
		if i == e.Current {
			cur = ">"
		}
		if q.Flagged {
			flag = "flagged"
		}
		t.AppendRow(row(cur, i+1, orDash(q.Host), fmt.Sprintf("%d%%", q.Weight), flag, clock(e.SpentOn(i, now)), insts[i].Title))
	}
	t.Render()
}

// printQuestion shows the current question's task, in the shape `lab start` shows one.
func printQuestion(w io.Writer, e *session.Exam, insts []*scenarios.Instance, kubeconfig string) {
	i := e.Current
	inst := insts[i]
	bold := paint(w, color.Bold)
	rule := strings.Repeat("─", 72)
	flag := ""
	if e.Questions[i].Flagged {
		flag = "  ·  flagged"
	}
	fmt.Fprintf(w, "\n%s\n", rule)
	fmt.Fprintf(w, "%s  %s\n", bold(fmt.Sprintf("Question %d/%d", i+1, len(e.Questions))), inst.Title)
	fmt.Fprintf(w, "Weight %d%%%s  ·  %s left\n", e.Questions[i].Weight, flag, clock(e.Left(time.Now())))
	if host := e.Questions[i].Host; host != "" {
		fmt.Fprintf(w, "Solve this question on host %s:  ssh %s  (in the exam's terminal, `lab exam shell`; or `lab ssh %s`)\n", bold(host), host, host)
	} else {
		fmt.Fprintf(w, "Use the lab cluster:  export KUBECONFIG=%s\n", kubeconfig)
	}
	fmt.Fprintf(w, "%s\n\n%s\n%s\n", rule, strings.TrimSpace(inst.Task), rule)
	fmt.Fprintf(w, "lab exam next · lab exam prev · lab exam flag · lab exam status · lab exam grade · lab exam shell\n\n")
}

func printReport(w io.Writer, rep *exam.Report) {
	green, red := paint(w, color.FgGreen), paint(w, color.FgRed)
	fmt.Fprintf(w, "\nExam %s, graded %s\n", rep.Exam, rep.Graded.Local().Format("2006-01-02 15:04"))
	t := newTable(w)
	t.AppendHeader(row("#", "RESULT", "SCORE", "WEIGHT", "EARNED", "TIME", "SCENARIO"))
	for _, q := range rep.Questions {
		result := green("PASS")
		if !q.Passed {
			result = red("FAIL")
		}
		t.AppendRow(row(q.Number, result, fmt.Sprintf("%d/%d", q.Score, q.Max), fmt.Sprintf("%d%%", q.Weight),
			fmt.Sprintf("%.1f", q.Credit), clock(time.Duration(q.Seconds*float64(time.Second))), q.Scenario))
	}
	t.Render()
	for _, q := range rep.Questions {
		if len(q.Failing) > 0 {
			fmt.Fprintf(w, "  Q%d %s: %s\n", q.Number, q.Scenario, q.Failing[0])
		}
	}
	printSurvived(w, rep.Survive)
	printTimelines(w, rep)
	verdict := green("PASS")
	if !rep.Passed {
		verdict = red("FAIL")
	}
	fmt.Fprintf(w, "\nTotal: %.1f%% (%.1f of %d weight); the CKA pass mark is %d%%: %s\n", rep.Percent, rep.Credit, rep.Weight, rep.PassMark, verdict)
}

// printTimelines prints each question's writes from the audit log: when they began, how long the fix took,
// and its wrong turns; then the writes no question involved.
func printTimelines(w io.Writer, rep *exam.Report) {
	header := false
	for _, q := range rep.Questions {
		tl := q.Timeline
		if tl == nil {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\nTimeline (from the API server's audit log):")
			header = true
		}
		after := time.Duration(tl.AfterSeconds * float64(time.Second))
		fmt.Fprintf(w, "  Q%d %s: first write at %s, last at %s (%d write(s))\n", q.Number, q.Scenario,
			clock(after), clock(after+time.Duration(tl.FixSeconds*float64(time.Second))), tl.Writes)
		for _, n := range tl.WrongTurns {
			fmt.Fprintf(w, "      wrong turn: %s\n", n.Message)
		}
	}
	for _, n := range rep.Coaching {
		fmt.Fprintf(w, "  outside every question: %s\n", n.Message)
	}
}

// clock shows a duration the way an exam timer does: 1:52:07, or 4:05 under an hour.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s%3600/60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// orDash shows an empty cell as "-", as kubectl does.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
