package commands

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/class"
)

// HintCost is what each hint takes off the score, shown before the hint is revealed.
const HintCost = 1

func newHintCmd(f *Factory) *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use:     "hint",
		Short:   fmt.Sprintf("Reveal the next hint (each costs %d point; the cost is shown first)", HintCost),
		Example: "  lab hint\n  lab hint --yes",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sess, err := f.Session(cmd.Context())
			if err != nil {
				return err
			}
			a, inst, err := currentInstance(f, sess)
			if err != nil {
				return err
			}
			if a.Hints >= len(inst.Hints) {
				fmt.Fprintf(f.Out, "No more hints (%d/%d taken). `lab solution` shows the reference solution.\n", a.Hints, len(inst.Hints))
				for i, h := range inst.Hints {
					fmt.Fprintf(f.Out, "  %d. %s\n", i+1, h)
				}
				return nil
			}
			fmt.Fprintf(f.Out, "Hint %d/%d costs %d point.\n", a.Hints+1, len(inst.Hints), HintCost)
			if !yes {
				if !isatty.IsTerminal(os.Stdin.Fd()) {
					return fmt.Errorf("confirm with `lab hint --yes` (no terminal to ask on)")
				}
				fmt.Fprint(f.Out, "Reveal it? [y/N] ")
				answer, _ := bufio.NewReader(os.Stdin).ReadString('\n')
				if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(answer)), "y") {
					return nil
				}
			}
			a.Hints++
			if err := sess.Save(a); err != nil {
				return err
			}
			reportToClass(cmd.Context(), f, class.EventHint, a, nil)
			fmt.Fprintf(f.Out, "\n%s\n", inst.Hints[a.Hints-1])
			return nil
		},
	}
	c.Flags().BoolVarP(&yes, "yes", "y", false, "reveal without asking")
	return c
}

func newSolutionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "solution",
		Short:   "Show the reference solution and why it is right (marks the attempt as solved with the solution)",
		Example: "  lab solution",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sess, err := f.Session(cmd.Context())
			if err != nil {
				return err
			}
			a, inst, err := currentInstance(f, sess)
			if err != nil {
				return err
			}
			a.SawSolution = true
			if err := sess.Save(a); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Why: %s\n\nReference solution (stage: %s):\n", strings.TrimSpace(inst.Explanation), inst.Stage)
			for _, s := range inst.Solution {
				fmt.Fprintf(f.Out, "  %s\n", s)
			}
			return nil
		},
	}
}
