package commands

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/scenarios"
)

func newResetCmd(f *Factory) *cobra.Command {
	var out outputFlags
	c := &cobra.Command{
		Use:   "reset",
		Short: "Undo the current scenario and return the cluster to its baseline, then prove it",
		Long: `reset reverts everything the scenario changed (restoring exactly what it recorded before changing
it), removes what the attempt added, and compares the cluster with the baseline recorded when it was
fresh. Anything still different is reported and the command fails, instead of claiming success.`,
		Example: "  lab reset",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			sess, unlock, err := lockedSession(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer unlock()
			start := time.Now()
			residue, err := sess.Reset(cmd.Context())
			if err != nil {
				return err
			}
			took := time.Since(start)
			js := map[string]any{"clean": len(residue) == 0, "residue": residue, "seconds": took.Seconds()}
			return out.print(f.Out, js, func() error {
				if len(residue) > 0 {
					for _, r := range residue {
						fmt.Fprintf(f.Out, "  residue: %s\n", r)
					}
					return fmt.Errorf("the cluster still differs from its baseline in %d place(s); run `lab reset` again, or recreate it with `lab cluster delete && lab cluster create`", len(residue))
				}
				fmt.Fprintf(f.Out, "Cluster %s matches its baseline (%.1fs)\n", sess.Cluster.Name, took.Seconds())
				return nil
			})
		},
	}
	out.addFlags(c)
	return c
}

func newStatusCmd(f *Factory) *cobra.Command {
	var out outputFlags
	c := &cobra.Command{
		Use:     "status",
		Short:   "Show the scenario in progress: time used and left, hints taken, last score",
		Example: "  lab status\n  lab status -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			sess, err := f.Session(cmd.Context())
			if err != nil {
				return err
			}
			a, err := sess.Current(cmd.Context())
			if err != nil {
				return err
			}
			cat, err := f.Catalog()
			if err != nil {
				return err
			}
			return out.print(f.Out, map[string]any{"cluster": sess.Cluster.Name, "attempt": a}, func() error {
				printStatus(f, sess.Cluster.Name, a, cat)
				return nil
			})
		},
	}
	out.addFlags(c)
	return c
}

func printStatus(f *Factory, cluster string, a *session.Attempt, cat *scenarios.Catalog) {
	if a == nil {
		fmt.Fprintf(f.Out, "Cluster %s: no scenario running (start one with `lab start <scenario>`)\n", cluster)
		return
	}
	fmt.Fprintf(f.Out, "Scenario:  %s (seed %d)\nPhase:     %s\n", a.Scenario, a.Seed, a.Phase)
	if a.Error != "" {
		fmt.Fprintf(f.Out, "Error:     %s\nRun `lab reset` to restore the cluster.\n", a.Error)
	}
	if a.Phase == session.PhaseStarting {
		fmt.Fprintln(f.Out, "The start was interrupted; run `lab reset` to restore the cluster.")
	}
	if !a.Started.IsZero() {
		used := time.Since(a.Started).Round(time.Second)
		fmt.Fprintf(f.Out, "Time used: %s", used)
		if sc, err := cat.Get(a.Scenario); err == nil {
			left := sc.TimeLimit.Duration - used
			if left < 0 {
				fmt.Fprintf(f.Out, " (over the %s limit by %s)", sc.TimeLimit, -left)
			} else {
				fmt.Fprintf(f.Out, " (%s left)", left)
			}
		}
		fmt.Fprintln(f.Out)
	}
	fmt.Fprintf(f.Out, "Hints:     %d\n", a.Hints)
	if a.LastCheck != nil {
		fmt.Fprintf(f.Out, "Last check: %d/%d, passed=%t\n", a.LastCheck.Score, a.LastCheck.Max, a.LastCheck.Passed)
	}
}
