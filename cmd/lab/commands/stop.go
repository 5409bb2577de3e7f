package commands

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/session"
)

func newStopCmd(f *Factory) *cobra.Command {
	var out outputFlags
	c := &cobra.Command{
		Use:   "stop",
		Short: "End the scenario in progress: record the attempt in your progress, then reset the cluster",
		Long: `stop records the attempt (its last ` + "`lab check`" + ` score, time, hints and diagnosis) in your progress
history, then resets the cluster to its baseline like ` + "`lab reset`" + `. An attempt that never ran ` + "`lab check`" + ` is
recorded as not passed.`,
		Example: "  lab stop\n  lab stop -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			cat, err := f.Catalog()
			if err != nil {
				return err
			}
			sess, unlock, err := lockedSession(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer unlock()
			st, err := sess.Stop(cmd.Context(), cat)
			if err != nil {
				return err
			}
			a := st.Attempt
			js := map[string]any{"scenario": a.Scenario, "recorded": st.Recorded, "lastCheck": a.LastCheck, "clean": len(st.Residue) == 0, "residue": st.Residue}
			return out.print(f.Out, js, func() error {
				if st.Recorded {
					fmt.Fprintf(f.Out, "Recorded %s: %s after %s, %d hint(s).\n", a.Scenario, attemptSummary(a), st.Spent, a.Hints)
				}
				for _, r := range st.Residue {
					fmt.Fprintf(f.Out, "  residue: %s\n", r)
				}
				if len(st.Residue) > 0 {
					return fmt.Errorf("the cluster still differs from its baseline in %d place(s); run `lab reset` again", len(st.Residue))
				}
				fmt.Fprintf(f.Out, "Cluster %s matches its baseline.\n", sess.Cluster.Name)
				return nil
			})
		},
	}
	out.addFlags(c)
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
