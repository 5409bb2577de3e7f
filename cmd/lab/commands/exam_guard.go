package commands

import (
	"cmp"
	"fmt"
	"time"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/internal/state"
)

// soloCommands act on one practice attempt: during an exam they would reset the exam's cluster, or give away
// (hint, solution, explain) or grade (check) one question, so an exam closes them.
var soloCommands = map[string]string{
	"start": "`lab exam stop` ends the exam first", "drill": "`lab exam stop` ends the exam first",
	"reset": "`lab exam stop` ends the exam and resets the cluster", "stop": "`lab exam stop` ends the exam",
	"check": "`lab exam grade` grades every question", "hint": "there are no hints in an exam",
	"solution": "there are no solutions in an exam", "explain": "the exam does not explain",
	"diagnose": "an exam is graded on the fix alone",
}

// examGuard runs before every command. While an exam runs it prints the time left on stderr, grades the exam
// once its time is up, and refuses the practice commands. It needs only the state directory, so it stays cheap;
// it never fails a command for want of state (the command reports that itself).
func examGuard(f *Factory, cmd *cobra.Command) error {
	top, sub := commandPath(cmd)
	if top == "" || hidden(cmd) {
		return nil
	}
	st, err := f.Store()
	if err != nil {
		return nil
	}
	e, err := session.ReadExam(st, f.ClusterName)
	if err != nil {
		fmt.Fprintf(f.ErrOut, "warning: %v\n", err)
		return nil
	}
	why, solo := soloCommands[top]
	if e == nil && solo {
		// A cluster lab created for another cluster's exam holds a question of it: resetting or starting a
		// scenario there would undo the question under the exam.
		if owner, err := session.ExamOwner(st, f.ClusterName); err != nil || owner != "" {
			return cmp.Or(err, fmt.Errorf("cluster %s holds a question of the exam on cluster %s: work on it from the question's host (`lab exam shell`), or end the exam with `lab --name %s exam stop`",
				f.ClusterName, owner, owner))
		}
	}
	if e == nil || e.Phase == session.PhaseGraded {
		return nil
	}
	if !e.Running() {
		if solo {
			return fmt.Errorf("an exam on cluster %s did not finish starting (%s): run `lab exam stop` to restore the cluster", f.ClusterName, e.Phase)
		}
		return nil
	}
	now := time.Now()
	if e.Expired(now) {
		if top == "exam" && (sub == "grade" || sub == "stop") {
			return nil
		}
		fmt.Fprintln(f.ErrOut, "Time is up: grading the exam.")
		if autoGrade(f, cmd) || !solo {
			return nil
		}
		return fmt.Errorf("the exam on cluster %s could not be graded: run `lab exam grade`", f.ClusterName)
	}
	fmt.Fprintln(f.ErrOut, paint(f.ErrOut, color.Faint)(fmt.Sprintf("exam: %s left, question %d/%d", clock(e.Left(now)), e.Current+1, len(e.Questions))))
	remind(f, st, e, now)
	if solo {
		return fmt.Errorf("an exam is running on cluster %s: `lab %s` is not available in an exam; %s", f.ClusterName, top, why)
	}
	return nil
}

// autoGrade grades an exam whose time ran out and prints the report on stderr, so the command's own output
// (perhaps JSON) stays clean. A failure is reported and the next command retries; it returns whether it graded.
func autoGrade(f *Factory, cmd *cobra.Command) bool {
	sess, e, insts, unlock, err := examSession(cmd.Context(), f)
	if err != nil {
		fmt.Fprintf(f.ErrOut, "warning: could not grade the exam: %v\n", err)
		return false
	}
	defer unlock()
	// An exam graded when its time runs out is graded as `lab exam grade` grades it by default.
	rep, err := gradeExam(cmd.Context(), f, sess, e, insts, true)
	if err != nil {
		fmt.Fprintf(f.ErrOut, "warning: could not grade the exam: %v\n", err)
		return false
	}
	printReport(f.ErrOut, rep)
	fmt.Fprintln(f.ErrOut, "`lab exam status` shows the report again; `lab exam stop` resets the cluster.")
	return true
}

// commandPath returns the top-level command's name and its subcommand's, "" for the root itself.
func commandPath(cmd *cobra.Command) (string, string) {
	var names []string
	for c := cmd; c.HasParent(); c = c.Parent() {
		names = append([]string{c.Name()}, names...)
	}
	switch len(names) {
	case 0:
		return "", ""
	case 1:
		return names[0], ""
	}
	return names[0], names[1]
}

// hidden: lab's internal commands (the grader's child process, the webhook server) and shell completion
// must print nothing extra and never grade.
func hidden(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Hidden || c.Name() == "completion" || c.Name() == cobra.ShellCompRequestCmd || c.Name() == "help" {
			return true
		}
	}
	return false
}

// remind prints the proctor's warning when the exam has just reached 30, 15 or 5 minutes left.
func remind(f *Factory, st *state.Store, e *session.Exam, now time.Time) {
	m, err := session.DueWarning(st, f.ClusterName, e, now)
	if err != nil {
		fmt.Fprintf(f.ErrOut, "warning: %v\n", err)
	}
	if m > 0 {
		fmt.Fprintln(f.ErrOut, paint(f.ErrOut, color.Bold, color.FgYellow)(fmt.Sprintf("Attention: %d minutes left in the exam.", m)))
	}
}

// newExamRemindCmd is what the exam's shells run before each prompt: the proctor's warning when one is due,
// nothing otherwise.
func newExamRemindCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "remind",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			st, err := f.Store()
			if err != nil {
				return nil
			}
			if e, err := session.ReadExam(st, f.ClusterName); err == nil && e != nil {
				remind(f, st, e, time.Now())
			}
			return nil
		},
	}
}
