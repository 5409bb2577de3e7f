package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/injector"
	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/scenarios"
)

type listRow struct {
	ID         string        `json:"id"`
	Title      string        `json:"title"`
	Stage      journey.Stage `json:"stage"`
	Difficulty string        `json:"difficulty"`
	Competency string        `json:"competency"`
	TimeLimit  string        `json:"timeLimit"`
	Weight     int           `json:"weight"`
	// Kind is "build" for a task that asks the learner to create something, "repair" for a fault to fix.
	Kind string `json:"kind"`
	// Best is the learner's best result from their history.
	Best *bestJSON `json:"best,omitempty"`
}

type listOptions struct {
	out                  outputFlags
	stageArg, difficulty string
	stage                journey.Stage
}

func newListCmd(f *Factory) *cobra.Command {
	o := &listOptions{}
	c := &cobra.Command{
		Use:     "list",
		Short:   "List the scenarios, grouped by the stage of the Pod's journey they break",
		Example: "  lab list\n  lab list --stage scheduling\n  lab list --difficulty easy -o json",
		Args:    cobra.NoArgs,
		RunE:    runE(f, o),
	}
	o.out.addFlags(c)
	c.Flags().StringVar(&o.stageArg, "stage", "", "only this stage (e.g. scheduling, rbac, cni)")
	c.Flags().StringVar(&o.difficulty, "difficulty", "", "only this difficulty (easy, medium, hard)")
	return c
}

// complete reads --stage by its aliases (rbac, cni, pull, ...).
func (o *listOptions) complete(_ *Factory, _ *cobra.Command, _ []string) error {
	if o.stageArg == "" {
		return nil
	}
	var err error
	o.stage, err = journey.ParseStage(o.stageArg)
	return err
}

func (o *listOptions) validate() error {
	if o.difficulty != "" && !slices.Contains(scenarios.Difficulties, o.difficulty) {
		return fmt.Errorf("unknown difficulty %q: use one of %s", o.difficulty, strings.Join(scenarios.Difficulties, ", "))
	}
	return o.out.validate()
}

func (o *listOptions) run(_ context.Context, f *Factory) error {
	cat, err := f.Catalog()
	if err != nil {
		return err
	}
	best := bestResults(f)
	var rows []listRow
	for _, s := range cat.All() {
		if (o.stage == "" || s.Stage == o.stage) && (o.difficulty == "" || s.Difficulty == o.difficulty) {
			rows = append(rows, listRow{s.ID, s.Title, s.Stage, s.Difficulty, s.Competency, shortDuration(s.TimeLimit.Duration), s.Weight, s.Kind(), best[s.ID]})
		}
	}
	return o.out.print(f.Out, rows, func() error {
		t := newTable(f.Out)
		t.AppendHeader(row("STAGE", "ID", "KIND", "DIFFICULTY", "TIME", "BEST", "TITLE"))
		var last journey.Stage
		for _, r := range rows {
			var st journey.Stage
			if r.Stage != last {
				st, last = r.Stage, r.Stage
			}
			t.AppendRow(row(st, r.ID, r.Kind, r.Difficulty, r.TimeLimit, r.Best, r.Title))
		}
		t.Render()
		return nil
	})
}

func newScenarioCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{Use: "scenario", Short: "Work on scenario definitions"}
	c.AddCommand(&cobra.Command{
		Use:   "lint [FILE...]",
		Short: "Check scenario files (the built-in catalogue when none is given), with file:line for every problem",
		Example: `  lab scenario lint
  lab scenario lint scenarios/catalog/taint-dedicated-node.yaml`,
		RunE: func(cmd *cobra.Command, files []string) error {
			all, errs, err := scenarios.ParseFiles(files)
			if err != nil {
				return err
			}
			if len(files) == 0 {
				cat, err := f.Catalog()
				if err != nil {
					return err
				}
				var perr scenarios.Errors
				if err := cat.Load(); errors.As(err, &perr) {
					errs = append(errs, perr...)
				} else if err != nil {
					return err
				} else {
					all = cat.All()
				}
			}
			for _, s := range all {
				errs = append(errs, scenarios.Lint(s, grader.Registered, injector.Registered)...)
			}
			if len(errs) > 0 {
				fmt.Fprintln(f.ErrOut, errs.Error())
				return &ExitError{Code: 1, Silent: true, Err: fmt.Errorf("%d problem(s)", len(errs))}
			}
			// A scenario that widens what its task may change says so here, with why: every such line is a
			// net change the guard lets through, for a reviewer to weigh.
			for _, s := range all {
				for _, m := range s.MayChange {
					fmt.Fprintf(f.Out, "%s: may change %s\n", s.ID, m)
				}
			}
			fmt.Fprintf(f.Out, "%s %d scenario(s) OK\n", color.GreenString("✓"), len(all))
			return nil
		},
	})
	return c
}
