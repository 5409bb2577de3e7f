package commands

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/internal/state/history"
)

func newStopCmd(f *Factory) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "stop",
		Short: "End the scenario in progress: record the attempt in your progress, then reset the cluster",
		Long: `stop records the attempt (its last ` + "`lab check`" + ` score, time, hints and diagnosis) in your progress
history, then resets the cluster to its baseline like ` + "`lab reset`" + `. An attempt that never ran ` + "`lab check`" + ` is
recorded as not passed.`,
		Example: "  lab stop\n  lab stop -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(output); err != nil {
				return err
			}
			sess, unlock, err := lockedSession(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer unlock()
			a, err := sess.Current()
			if err != nil {
				return err
			}
			if a == nil {
				return fmt.Errorf("no scenario is running on cluster %s: nothing to stop (`lab reset` restores the baseline anyway)", sess.Cluster.Name)
			}
			cat, err := f.Catalog()
			if err != nil {
				return err
			}
			// An attempt that never finished starting was never the learner's to solve: nothing to record.
			recorded, spent := a.Phase == session.PhaseActive, time.Since(a.Started).Round(time.Second)
			if recorded {
				sc, err := cat.Get(a.Scenario)
				if err != nil {
					return err
				}
				recordHistory(f, attemptRecord(history.EventStop, a, sc.Stage))
			}
			residue, err := sess.Reset(cmd.Context())
			if err != nil {
				return err
			}
			if output == "json" {
				return json.NewEncoder(f.Out).Encode(map[string]any{"scenario": a.Scenario, "recorded": recorded, "lastCheck": a.LastCheck, "clean": len(residue) == 0, "residue": residue})
			}
			if recorded {
				fmt.Fprintf(f.Out, "Recorded %s: %s after %s, %d hint(s).\n", a.Scenario, attemptSummary(a), spent, a.Hints)
			}
			for _, r := range residue {
				fmt.Fprintf(f.Out, "  residue: %s\n", r)
			}
			if len(residue) > 0 {
				return fmt.Errorf("the cluster still differs from its baseline in %d place(s); run `lab reset` again", len(residue))
			}
			fmt.Fprintf(f.Out, "Cluster %s matches its baseline.\n", sess.Cluster.Name)
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return c
}

func attemptSummary(a *session.Attempt) string {
	c := a.LastCheck
	switch {
	case c == nil:
		return "never checked"
	case c.Passed:
		return fmt.Sprintf("passed with %d/%d", c.Score, c.Max)
	}
	return fmt.Sprintf("not passed, %d/%d at the last check", c.Score, c.Max)
}
