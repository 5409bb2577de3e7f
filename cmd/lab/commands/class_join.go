package commands

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/scenarios"
)

type classJoinOptions struct {
	name        string
	token       string
	fingerprint string
}

func newClassJoinCmd(f *Factory) *cobra.Command {
	o := &classJoinOptions{}
	c := &cobra.Command{
		Use:   "join URL --fingerprint SHA256 --token TOKEN --name NAME",
		Short: "Join a class with the token your instructor shows, and start its first scenario",
		Long: `join joins the class served at URL under your name, keeps the membership in lab's state directory, and
starts the class's first scenario with the class's seed: on your lab cluster (created when there is none),
or, in a shared-cluster class, in your own namespace of the instructor's cluster. From then on lab check,
hint and diagnose report to the class scoreboard. Joining again with the same name takes you back in.

The class server speaks https with a certificate of its own; --fingerprint (from the instructor's join
command) pins it, so lab talks to that server and no other, with no CA to set up.`,
		Example: `  lab class join https://192.168.1.20:8787 --fingerprint 5E:0A:...:C1 --token Q2X7K9 --name alice
  lab class join 192.168.1.20:8787 --fingerprint 5E0A...C1 --token Q2X7K9 --name bob.smith`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(o.name) == "" || strings.TrimSpace(o.token) == "" {
				return fmt.Errorf("join needs --name (yours) and --token (the class's, from your instructor)")
			}
			return o.run(cmd.Context(), f, args[0])
		},
	}
	c.Flags().StringVar(&o.name, "name", "", "your name on the scoreboard (letters, digits, . _ -)")
	c.Flags().StringVar(&o.token, "token", "", "the class token your instructor shows")
	c.Flags().StringVar(&o.fingerprint, "fingerprint", "", "the SHA-256 fingerprint of the class server's certificate, from the join command")
	return c
}

func (o *classJoinOptions) run(ctx context.Context, f *Factory, url string) error {
	local, err := joinedClass(f)
	if err != nil {
		return err
	}
	j, err := local.Join(ctx, class.Membership{URL: url, Fingerprint: o.fingerprint, Name: o.name}, o.token, f.ClusterName)
	if err != nil {
		return err
	}
	plan := j.Plan
	fmt.Fprintf(f.ErrOut, "Joined class %q as %s: %d scenario(s), %s left\n", plan.Title, j.Membership.Name, len(plan.Scenarios), shortDuration(plan.TimeLeft(time.Now())))
	if ws := j.Membership.Workspace; ws != nil {
		path, err := local.SaveWorkspace(j)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.ErrOut, "Your namespace on the shared cluster is %s:  export KUBECONFIG=%s\n", ws.Namespace, path)
	}
	return startClassScenario(ctx, f, j)
}

func newClassNextCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "next",
		Short:   "Start the class's next scenario (the one in progress is reset first)",
		Example: "  lab class next",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			local, err := joinedClass(f)
			if err != nil {
				return err
			}
			j, err := local.Update(cmd.Context(), func(j *class.Joined) (*class.Joined, error) {
				switch {
				case j == nil:
					return nil, class.ErrNotJoined
				case j.Plan.Exam:
					return nil, fmt.Errorf("class %q is an exam with every scenario at once: `lab exam next` moves to the next question", j.Plan.Title)
				case j.Current+1 >= len(j.Plan.Scenarios):
					return nil, fmt.Errorf("%s is the last scenario of class %q: `lab class status` shows where you stand", j.Scenario(), j.Plan.Title)
				}
				j.Current++
				return j, nil
			})
			if err != nil {
				return err
			}
			return startClassScenario(cmd.Context(), f, j)
		},
	}
}

// startClassScenario starts what the learner's place in the class asks for, with the class's seed: the
// current scenario, or in an exam class every scenario at once on the class's remaining time. The class
// hears of each start.
func startClassScenario(ctx context.Context, f *Factory, cs *class.Joined) error {
	st, err := f.Store()
	if err != nil {
		return err
	}
	if e, err := session.ReadExam(st, f.ClusterName); err != nil {
		return err
	} else if e != nil && e.Running() {
		return fmt.Errorf("an exam is running on cluster %s: `lab exam stop` ends it before the class starts", f.ClusterName)
	}
	if !cs.Plan.Exam {
		id := cs.Scenario()
		fmt.Fprintf(f.ErrOut, "Class scenario %d/%d\n", cs.Current+1, len(cs.Plan.Scenarios))
		if err := startScenario(ctx, f, id, cs.Plan.Seed); err != nil {
			return err
		}
		postToClass(ctx, f, class.Result{Scenario: id, Event: class.EventStart})
		return nil
	}
	left := cs.Plan.TimeLeft(time.Now()).Truncate(time.Second)
	if left < time.Minute {
		return fmt.Errorf("class %q has less than a minute left: there is no time for its exam", cs.Plan.Title)
	}
	pool, err := planScenarios(f, cs.Plan)
	if err != nil {
		return err
	}
	if err := startExam(ctx, f, session.ExamOptions{Pool: pool, Questions: len(pool), Seed: cs.Plan.Seed, Duration: left, Clusters: 1}); err != nil {
		return err
	}
	e, err := session.ReadExam(st, f.ClusterName)
	if err != nil || e == nil {
		return err
	}
	var rs []class.Result
	for _, q := range e.Questions {
		rs = append(rs, class.Result{Scenario: q.Scenario, Event: class.EventStart})
	}
	postToClass(ctx, f, rs...)
	return nil
}

func planScenarios(f *Factory, plan class.Plan) ([]*scenarios.Scenario, error) {
	cat, err := f.Catalog()
	if err != nil {
		return nil, err
	}
	var out []*scenarios.Scenario
	for _, id := range plan.Scenarios {
		sc, err := cat.Get(id)
		if err != nil {
			return nil, fmt.Errorf("class scenario %s is not in this lab's catalogue (a different lab version than the instructor's?): %w", id, err)
		}
		out = append(out, sc)
	}
	return out, nil
}

func newClassLeaveCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "leave",
		Short: "Leave the class: your key is revoked and this machine stops reporting (your results stay on the scoreboard)",
		Long: `leave tells the class server you left, which revokes your learner key (and, in a shared-cluster class,
your credentials on the shared cluster), and forgets the class on this machine. In a shared-cluster class it
first deletes what lab created in your namespace; on your own cluster the scenario in progress stays until
` + "`lab reset`" + `. Your name stays yours in that class: joining it again takes another name.`,
		Example: "  lab class leave",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			local, j, err := currentClass(f)
			if err != nil {
				return err
			}
			if ws := j.Membership.Workspace; ws != nil {
				if err := resetShared(cmd.Context(), f); err != nil {
					fmt.Fprintf(f.ErrOut, "warning: namespace %s keeps what the scenario created (%v); the instructor deletes it with the class\n", ws.Namespace, err)
				}
				st, err := f.Store()
				if err != nil {
					return err
				}
				if err := st.RemoveCluster(j.SharedClusterName()); err != nil {
					return fmt.Errorf("forget the shared cluster: %w", err)
				}
			}
			if err := class.NewClient(j.Membership).Leave(cmd.Context()); err != nil {
				fmt.Fprintf(f.ErrOut, "warning: the class server did not hear you leave, so your key stays valid until the class ends: %v\n", err)
			}
			if _, err := local.Update(cmd.Context(), func(*class.Joined) (*class.Joined, error) { return nil, nil }); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Left class %q. Your results stay on its scoreboard.\n", j.Plan.Title)
			return nil
		},
	}
}

// resetShared deletes what the attempt created in the learner's namespace.
func resetShared(ctx context.Context, f *Factory) error {
	sess, unlock, err := lockedSession(ctx, f)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = sess.Reset(ctx)
	return err
}
