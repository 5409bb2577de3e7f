package commands

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/session"
)

type hintOptions struct {
	yes bool
	// in is where the confirmation is read: cobra's input stream, a terminal or not.
	in io.Reader
}

func newHintCmd(f *Factory) *cobra.Command {
	o := &hintOptions{}
	c := &cobra.Command{
		Use:     "hint",
		Short:   fmt.Sprintf("Reveal the next hint (each costs %d point; the cost is shown first)", session.HintCost),
		Example: "  lab hint\n  lab hint --yes",
		Args:    cobra.NoArgs,
		RunE:    runE(f, o),
	}
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "reveal without asking")
	return c
}

func (o *hintOptions) complete(_ *Factory, cmd *cobra.Command, _ []string) error {
	o.in = cmd.InOrStdin()
	return nil
}

func (o *hintOptions) validate() error {
	if !o.yes && !isTerminal(o.in) {
		return errors.New("confirm with `lab hint --yes` (no terminal to ask on)")
	}
	return nil
}

func (o *hintOptions) run(ctx context.Context, f *Factory) error {
	sess, unlock, err := lockedSession(ctx, f)
	if err != nil {
		return err
	}
	defer unlock()
	a, inst, err := currentInstance(ctx, f, sess)
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
	fmt.Fprintf(f.Out, "Hint %d/%d costs %d point.\n", a.Hints+1, len(inst.Hints), session.HintCost)
	if !o.yes {
		fmt.Fprint(f.Out, "Reveal it? [y/N] ")
		answer, _ := bufio.NewReader(o.in).ReadString('\n')
		if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(answer)), "y") {
			return nil
		}
	}
	hint, _, err := sess.RevealHint(a, inst)
	if err != nil {
		return err
	}
	reportToClass(ctx, f, class.EventHint, a, nil)
	fmt.Fprintf(f.Out, "\n%s\n", hint)
	return nil
}

func newSolutionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "solution",
		Short:   "Show the reference solution and why it is right (marks the attempt as solved with the solution)",
		Example: "  lab solution",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sess, unlock, err := lockedSession(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer unlock()
			a, inst, err := currentInstance(cmd.Context(), f, sess)
			if err != nil {
				return err
			}
			if err := sess.RevealSolution(a); err != nil {
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
