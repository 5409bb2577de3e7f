package commands

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/scenarios"
)

type examOptions struct {
	session.ExamOptions
	only []string
	// web serves the exam's page once it has started, as `lab exam open` does.
	web bool
}

func newExamCmd(f *Factory) *cobra.Command {
	o := &examOptions{}
	c := &cobra.Command{
		Use:   "exam",
		Short: "Sit an exam drill: several scenarios broken at once, one clock, graded together",
		Long: `exam breaks the cluster for a set of questions across the journey's stages at once, each in its own
namespace and with its own weight, and starts one clock. Faults are independent: at most one question per
cluster changes anything beyond its namespaces (a node, a webhook), a question that changes a worker needs
another worker for the others' Pods, and no two questions share a namespace. A second such question, or
one that would take the only worker, goes to a second cluster lab creates for the exam (<cluster>-exam2,
deleted by ` + "`lab exam stop`" + `); its host reaches it, so where a question lives is nothing to learn.
--clusters 1 keeps every question on the one cluster.
Move between questions with next and prev (the time on each is measured), flag the ones to revisit,
and grade when done; when time runs out, the next lab command grades. A question earns its weight in
proportion to the task checks it passes, and nothing if the fix broke what the task protects; the exam
passes at the CKA's ` + fmt.Sprint(exam.PassMark) + `% of the total weight. Hints, check and solution are not available
during an exam.`,
		Example: `  lab exam                              # up to 16 questions, 120 minutes
  lab exam --duration 30m --questions 4 --seed 7
  lab exam --scenarios bad-image-tag,readiness-probe-wrong-path
  lab exam --clusters 1                 # no second cluster: one cluster-wide question at most
  lab exam --web                        # then sit it in the browser (lab exam open)
  lab exam next; lab exam flag; lab exam status
  lab exam grade --junit exam.xml`,
		Args: cobra.NoArgs,
		RunE: runE(f, o),
	}
	c.Flags().DurationVar(&o.Duration, "duration", 120*time.Minute, "time for the whole exam")
	c.Flags().IntVar(&o.Questions, "questions", 16, "how many questions, at most (the catalogue may offer fewer independent ones)")
	c.Flags().Int64Var(&o.Seed, "seed", 0, "seed for the choice of questions and their variants (random when unset)")
	c.Flags().StringSliceVar(&o.only, "scenarios", nil, "exactly these scenarios, in this order (comma-separated ids)")
	c.Flags().IntVar(&o.Clusters, "clusters", session.MaxClusters, "how many kind clusters the exam may use: 2 gives a second cluster-wide question a cluster of its own, 1 keeps to the one")
	c.Flags().BoolVar(&o.web, "web", false, "once started, serve the exam's page on this machine and open it (see `lab exam open`)")
	c.AddCommand(newExamOpenCmd(f), newExamReviewCmd(f), newExamMoveCmd(f, "next", 1), newExamMoveCmd(f, "prev", -1), newExamFlagCmd(f), newExamStatusCmd(f),
		newExamGradeCmd(f), newExamStopCmd(f), newExamShellCmd(f), newExamRemindCmd(f))
	return c
}

// complete draws a seed when none was given and finds the pool: the named scenarios, or the catalogue.
func (o *examOptions) complete(f *Factory, cmd *cobra.Command, _ []string) error {
	if !cmd.Flags().Changed("seed") {
		o.Seed = rand.Int64N(1_000_000)
	}
	cat, err := f.Catalog()
	if err != nil {
		return err
	}
	o.Pool, o.Exactly = cat.All(), len(o.only) > 0
	if o.Exactly {
		o.Pool = nil
		for _, id := range o.only {
			sc, err := cat.Get(id)
			if err != nil {
				return err
			}
			o.Pool = append(o.Pool, sc)
		}
	}
	return nil
}

func (o *examOptions) validate() error {
	if o.Duration < time.Minute || o.Duration > 24*time.Hour {
		return fmt.Errorf("--duration must be between 1m and 24h, got %s", o.Duration)
	}
	if o.Questions < 1 || o.Questions > 100 {
		return fmt.Errorf("--questions must be between 1 and 100, got %d", o.Questions)
	}
	if o.Clusters < 1 || o.Clusters > session.MaxClusters {
		return fmt.Errorf("--clusters must be between 1 and %d (1 keeps the exam on one cluster), got %d", session.MaxClusters, o.Clusters)
	}
	return nil
}

func (o *examOptions) run(ctx context.Context, f *Factory) error {
	if err := startExam(ctx, f, o.ExamOptions); err != nil || !o.web {
		return err
	}
	page := &examOpenOptions{}
	if err := page.load(ctx, f); err != nil {
		return err
	}
	if err := page.validate(); err != nil {
		return err
	}
	return page.run(ctx, f)
}

// startExam creates the cluster when there is none, starts an exam on it and prints its overview and first
// question.
func startExam(ctx context.Context, f *Factory, o session.ExamOptions) error {
	cat, err := f.Catalog()
	if err != nil {
		return err
	}
	if err := ensureCluster(ctx, f, cat); err != nil {
		return err
	}
	sess, unlock, err := lockedSession(ctx, f)
	if err != nil {
		return err
	}
	defer unlock()
	fmt.Fprintf(f.ErrOut, "Starting an exam on cluster %s (seed %d, %s)\n", sess.Cluster.Name, o.Seed, shortDuration(o.Duration))
	e, insts, err := sess.StartExam(ctx, o)
	if err != nil {
		return err
	}
	printExamOverview(f.Out, e, insts)
	printQuestion(f.Out, e, insts, sess.Cluster.Kubeconfig)
	return nil
}

// examSession is a locked session with the cluster's running exam and its instances.
func examSession(ctx context.Context, f *Factory) (*session.Session, *session.Exam, []*scenarios.Instance, func(), error) {
	sess, unlock, err := lockedSession(ctx, f)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	e, insts, err := loadExam(f, sess)
	if err == nil {
		err = requireRunning(sess, e)
	}
	if err != nil {
		unlock()
		return nil, nil, nil, nil, err
	}
	return sess, e, insts, unlock, nil
}

// loadExam reads the exam on the session's cluster; an error when there is none.
func loadExam(f *Factory, sess *session.Session) (*session.Exam, []*scenarios.Instance, error) {
	e, err := sess.Exam()
	if err != nil {
		return nil, nil, err
	}
	if e == nil {
		return nil, nil, fmt.Errorf("no exam on cluster %s: start one with `lab exam`", sess.Cluster.Name)
	}
	cat, err := f.Catalog()
	if err != nil {
		return nil, nil, err
	}
	insts, err := sess.ExamInstances(cat, e)
	return e, insts, err
}

func requireRunning(sess *session.Session, e *session.Exam) error {
	switch e.Phase {
	case session.PhaseActive:
		return nil
	case session.PhaseGraded:
		return fmt.Errorf("the exam on cluster %s has ended: `lab exam status` shows its report, `lab exam stop` resets the cluster", sess.Cluster.Name)
	}
	return fmt.Errorf("the exam on cluster %s did not finish starting (%s): run `lab exam stop` to restore the cluster", sess.Cluster.Name, e.Phase)
}

func newExamMoveCmd(f *Factory, name string, step int) *cobra.Command {
	return &cobra.Command{
		Use:     name,
		Short:   fmt.Sprintf("Go to the %s question and show its task (the clock moves with you)", map[int]string{1: "next", -1: "previous"}[step]),
		Example: "  lab exam " + name,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sess, e, insts, unlock, err := examSession(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer unlock()
			e.Go(e.Current+step, time.Now().UTC())
			if err := sess.SaveExam(e); err != nil {
				return err
			}
			printQuestion(f.Out, e, insts, sess.Cluster.Kubeconfig)
			return nil
		},
	}
}

func newExamFlagCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "flag [QUESTION]",
		Short:   "Flag a question to come back to, or unflag it (the current one by default)",
		Example: "  lab exam flag\n  lab exam flag 3",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			if len(args) == 1 {
				if _, err := fmt.Sscanf(args[0], "%d", &n); err != nil || n < 1 {
					return fmt.Errorf("QUESTION is a question number such as 3, got %q", args[0])
				}
			}
			sess, e, _, unlock, err := examSession(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer unlock()
			i, err := e.ToggleFlag(n)
			if err != nil {
				return err
			}
			if err := sess.SaveExam(e); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Question %d %s.\n", i+1, map[bool]string{true: "flagged", false: "unflagged"}[e.Questions[i].Flagged])
			return nil
		},
	}
}

func newExamShellCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "shell",
		Short: "Open the exam's terminal: ssh <host> from there reaches a question's host, as in the exam",
		Long: `shell opens the exam's terminal, a bash whose ssh reaches the exam's hosts (each question names the
host it is solved on) and the cluster's nodes. On a host, kubectl (and its alias k, with completion) works
with that host's kubeconfig; a change made from another host is graded as the exam grades it.`,
		Example: "  lab exam shell\n  ssh cka1024",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := f.Store()
			if err != nil {
				return err
			}
			e, err := session.ReadExam(st, f.ClusterName)
			if err != nil {
				return err
			}
			if e == nil {
				return fmt.Errorf("no exam on cluster %s: start one with `lab exam`", f.ClusterName)
			}
			argv, env, err := session.ExamHostsOf(st, f.ClusterName).Shell("", nil)
			if err != nil {
				return fmt.Errorf("%w: this exam has no hosts (started by an older lab); use `lab ssh <node>` and the cluster's kubeconfig", err)
			}
			return runShell(f, cmd, argv, env, true)
		},
	}
}
