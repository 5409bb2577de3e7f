package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/scenarios"
)

type startOptions struct {
	scenario string
	seed     int64
}

func newStartCmd(f *Factory) *cobra.Command {
	o := &startOptions{}
	c := &cobra.Command{
		Use:   "start SCENARIO",
		Short: "Break the cluster for a scenario and show its task (creates or reuses the cluster)",
		Example: `  lab start taint-dedicated-node
  lab start bad-image-tag --seed 7      # the same variant on every machine`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeScenarios(f),
		RunE:              runE(f, o),
	}
	o.addSeedFlag(c)
	return c
}

func (o *startOptions) addSeedFlag(c *cobra.Command) {
	c.Flags().Int64Var(&o.seed, "seed", 0, "variant seed (names, nodes and values derive from it; random when unset)")
}

// complete draws a seed when none was given and finds the scenario.
func (o *startOptions) complete(f *Factory, cmd *cobra.Command, args []string) error {
	if !cmd.Flags().Changed("seed") {
		o.seed = rand.Int64N(1_000_000)
	}
	o.scenario = args[0]
	cat, err := f.Catalog()
	if err != nil {
		return err
	}
	_, err = cat.Get(o.scenario)
	return err
}

func (o *startOptions) validate() error { return nil }

func (o *startOptions) run(ctx context.Context, f *Factory) error {
	return startScenario(ctx, f, o.scenario, o.seed)
}

// startScenario creates the cluster when there is none, starts the scenario id for seed and prints its task.
func startScenario(ctx context.Context, f *Factory, id string, seed int64) error {
	cat, err := f.Catalog()
	if err != nil {
		return err
	}
	sc, err := cat.Get(id)
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
	fmt.Fprintf(f.ErrOut, "Starting %s (seed %d)\n", sc.ID, seed)
	inst, err := sess.Start(ctx, sc, seed)
	if err != nil {
		return err
	}
	printTask(f.Out, inst, sess.Cluster.Kubeconfig)
	return nil
}

// ensureCluster creates the lab cluster when there is none; an existing one is verified by lockedSession.
func ensureCluster(ctx context.Context, f *Factory, cat *scenarios.Catalog) error {
	if _, err := f.Cluster(ctx); !errors.Is(err, cluster.ErrNoCluster) {
		return nil
	}
	_, _, err := createCluster(ctx, f, cluster.CreateWithImages(cat.Images()))
	return err
}

// createCluster creates the lab cluster, or reuses it, holding its lock: a command on a cluster being made
// would find it half-made.
func createCluster(ctx context.Context, f *Factory, opts ...cluster.CreateOption) (*cluster.Cluster, bool, error) {
	p, err := f.Provider()
	if err != nil {
		return nil, false, err
	}
	unlock, err := lockCluster(ctx, f)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	return p.Create(ctx, f.ClusterName, opts...)
}

// lockCluster takes the cluster's lock (session.Lock) for the rest of a command.
func lockCluster(ctx context.Context, f *Factory) (func(), error) {
	st, err := f.Store()
	if err != nil {
		return nil, err
	}
	return session.Lock(ctx, st, f.ClusterName)
}

// lockedSession returns a session holding the cluster's lock, so two lab commands never change it at once.
func lockedSession(ctx context.Context, f *Factory) (*session.Session, func(), error) {
	unlock, err := lockCluster(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	sess, err := f.Session(ctx)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return sess, unlock, nil
}

func printTask(w io.Writer, inst *scenarios.Instance, kubeconfig string) {
	bold := color.New(color.Bold).SprintFunc()
	rule := strings.Repeat("─", 72)
	fmt.Fprintf(w, "\n%s\n", rule)
	fmt.Fprintf(w, "%s  %s\n", bold("Task"), inst.Title)
	fmt.Fprintf(w, "Weight %d%%  ·  %s  ·  time limit %s  ·  scenario %s  ·  seed %d\n", inst.Weight, inst.Difficulty, shortDuration(inst.TimeLimit.Duration), inst.ID, inst.Seed)
	fmt.Fprintf(w, "Use the lab cluster:  export KUBECONFIG=%s\n", kubeconfig)
	fmt.Fprintf(w, "%s\n\n%s\n%s\n", rule, strings.TrimSpace(inst.Task), rule)
	fmt.Fprintf(w, "lab hint · lab check · lab solution · lab reset · lab ssh <node>\n\n")
}

func completeScenarios(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cat, err := f.Catalog()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []string
		for _, s := range cat.All() {
			out = append(out, s.ID+"\t"+s.Title)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
