package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
	TimeLimit  string        `json:"timeLimit"`
	Weight     int           `json:"weight"`
	// Best is the learner's best result from their history.
	Best *bestJSON `json:"best,omitempty"`
}

func newListCmd(f *Factory) *cobra.Command {
	var output, stageArg, difficulty string
	c := &cobra.Command{
		Use:     "list",
		Short:   "List the scenarios, grouped by the stage of the Pod's journey they break",
		Example: "  lab list\n  lab list --stage scheduling\n  lab list --difficulty easy -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(output); err != nil {
				return err
			}
			var stage journey.Stage
			if stageArg != "" {
				st, err := journey.ParseStage(stageArg)
				if err != nil {
					return err
				}
				stage = st
			}
			if difficulty != "" && !slices.Contains(scenarios.Difficulties, difficulty) {
				return fmt.Errorf("unknown difficulty %q: use one of %s", difficulty, strings.Join(scenarios.Difficulties, ", "))
			}
			cat, err := f.Catalog()
			if err != nil {
				return err
			}
			best := bestResults(f)
			var rows []listRow
			for _, s := range cat.All() {
				if (stage == "" || s.Stage == stage) && (difficulty == "" || s.Difficulty == difficulty) {
					rows = append(rows, listRow{s.ID, s.Title, s.Stage, s.Difficulty, shortDuration(s.TimeLimit.Duration), s.Weight, best[s.ID]})
				}
			}
			if output == "json" {
				return json.NewEncoder(f.Out).Encode(rows)
			}
			t := newTable(f.Out)
			t.AppendHeader(row("STAGE", "ID", "DIFFICULTY", "TIME", "BEST", "TITLE"))
			var last journey.Stage
			for _, r := range rows {
				var st journey.Stage
				if r.Stage != last {
					st, last = r.Stage, r.Stage
				}
				t.AppendRow(row(st, r.ID, r.Difficulty, r.TimeLimit, r.Best, r.Title))
			}
			t.Render()
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	c.Flags().StringVar(&stageArg, "stage", "", "only this stage (e.g. scheduling, rbac, cni)")
	c.Flags().StringVar(&difficulty, "difficulty", "", "only this difficulty (easy, medium, hard)")
	return c
}

func newScenarioCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{Use: "scenario", Short: "Work on scenario definitions"}
	c.AddCommand(&cobra.Command{
		Use:   "lint [FILE...]",
		Short: "Check scenario files (the built-in catalogue when none is given), with file:line for every problem",
		Example: `  lab scenario lint
  lab scenario lint scenarios/catalog/taint-dedicated-node.yaml`,
		RunE: func(cmd *cobra.Command, files []string) error {
			var all []*scenarios.Scenario
			var errs scenarios.Errors
			if len(files) == 0 {
				cat, err := f.Catalog()
				if err != nil {
					return err
				}
				all = cat.All()
			}
			for _, file := range files {
				data, err := os.ReadFile(file)
				if err != nil {
					return err
				}
				s, err := scenarios.Parse(file, data)
				var perr scenarios.Errors
				if errors.As(err, &perr) {
					errs = append(errs, perr...)
					continue
				} else if err != nil {
					return err
				}
				all = append(all, s)
			}
			for _, s := range all {
				errs = append(errs, scenarios.Lint(s, grader.Registered, injector.Registered)...)
			}
			if len(errs) > 0 {
				fmt.Fprintln(f.ErrOut, errs.Error())
				return &ExitError{Code: 1, Silent: true, Err: fmt.Errorf("%d problem(s)", len(errs))}
			}
			fmt.Fprintf(f.Out, "%s %d scenario(s) OK\n", color.GreenString("✓"), len(all))
			return nil
		},
	})
	return c
}
