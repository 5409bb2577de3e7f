package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/practice"
	"github.com/cka-lab/lab/internal/state/history"
)

type stageJSON struct {
	Stage               journey.Stage `json:"stage"`
	Attempts            int           `json:"attempts"`
	Passes              int           `json:"passes"`
	MedianSecondsToPass float64       `json:"medianSecondsToPass"`
	Hints               int           `json:"hints"`
	Diagnoses           int           `json:"diagnoses"`
	DiagnosesCorrect    int           `json:"diagnosesCorrect"`
}

type progressJSON struct {
	Attempts int           `json:"attempts"`
	Stages   []stageJSON   `json:"stages"`
	Weakest  journey.Stage `json:"weakest"`
	Why      string        `json:"why"`
}

func newProgressCmd(f *Factory) *cobra.Command {
	var out outputFlags
	c := &cobra.Command{
		Use:   "progress",
		Short: "Show your results per stage: attempts, passes, median time to pass, hints, diagnosis accuracy",
		Long: `progress reads the history lab keeps of your graded attempts (lab check, lab stop, exam questions)
in its state directory, and sums it up per stage of the Pod's journey, so you see where you are slow,
where you need hints and where your diagnosis is off. ` + "`lab drill`" + ` practises the weakest stage.`,
		Example: "  lab progress\n  lab progress -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			cat, err := f.Catalog()
			if err != nil {
				return err
			}
			results, err := history.Load()
			if err != nil {
				return err
			}
			p := practice.ProgressOf(cat, results)
			js := progressJSON{Attempts: p.Attempts, Weakest: p.Weakest, Why: p.Why}
			for _, s := range p.Stages {
				js.Stages = append(js.Stages, stageJSON{s.Stage, s.Attempts, s.Passes, s.MedianTimeToPass.Seconds(), s.Hints, s.Diagnoses, s.DiagnosesCorrect})
			}
			return out.print(f.Out, js, func() error {
				printProgress(f, p)
				return nil
			})
		},
	}
	out.addFlags(c)
	return c
}

func printProgress(f *Factory, p practice.Progress) {
	t := newTable(f.Out)
	t.AppendHeader(row("STAGE", "ATTEMPTS", "PASSED", "MEDIAN TIME TO PASS", "HINTS", "DIAGNOSIS"))
	for _, s := range p.Stages {
		median, diag := "-", "-"
		if s.Passes > 0 {
			median = shortDuration(s.MedianTimeToPass)
		}
		if s.Diagnoses > 0 {
			diag = fmt.Sprintf("%d/%d right", s.DiagnosesCorrect, s.Diagnoses)
		}
		t.AppendRow(row(s.Stage, s.Attempts, s.Passes, median, s.Hints, diag))
	}
	t.Render()
	fmt.Fprintf(f.Out, "\nWeakest: %s (%s). `lab drill` practises it.\n", p.Weakest, p.Why)
}

// drillOptions start the scenario practice.Drill picks from the learner's history.
type drillOptions struct {
	startOptions
	drilled practice.Progress
}

func newDrillCmd(f *Factory) *cobra.Command {
	o := &drillOptions{}
	c := &cobra.Command{
		Use:   "drill",
		Short: "Start a scenario of your weakest stage (untried stages first, then failures, slow fixes, hints, wrong diagnoses)",
		Example: `  lab drill
  lab drill --seed 7`,
		Args: cobra.NoArgs,
		RunE: runE(f, o),
	}
	o.addSeedFlag(c)
	return c
}

func (o *drillOptions) complete(f *Factory, cmd *cobra.Command, _ []string) error {
	cat, err := f.Catalog()
	if err != nil {
		return err
	}
	results, err := history.Load()
	if err != nil {
		return err
	}
	id, p := practice.Drill(cat, results)
	o.drilled = p
	return o.startOptions.complete(f, cmd, []string{id})
}

func (o *drillOptions) run(ctx context.Context, f *Factory) error {
	fmt.Fprintf(f.Out, "Drilling %s: %s.\n", o.drilled.Weakest, o.drilled.Why)
	return o.startOptions.run(ctx, f)
}

// bestJSON is a scenario's best result in `lab list`.
type bestJSON struct {
	Score         int     `json:"score"`
	Max           int     `json:"max"`
	Passed        bool    `json:"passed"`
	SecondsToPass float64 `json:"secondsToPass,omitempty"`
}

// String is the BEST column: "6/6 in 3m12s" for a pass, the score alone for a fail, "-" when never graded.
func (b *bestJSON) String() string {
	switch {
	case b == nil:
		return "-"
	case b.Passed:
		return fmt.Sprintf("%d/%d in %s", b.Score, b.Max, shortDuration(time.Duration(b.SecondsToPass)*time.Second))
	}
	return fmt.Sprintf("%d/%d", b.Score, b.Max)
}

// bestResults reads the best result of every scenario from the history; without one, the column is empty.
func bestResults(f *Factory) map[string]*bestJSON {
	results, err := history.Load()
	if err != nil {
		fmt.Fprintf(f.ErrOut, "warning: %v\n", err)
	}
	out := map[string]*bestJSON{}
	for id, b := range history.BestByScenario(results) {
		out[id] = &bestJSON{b.Score, b.Max, b.Passed, b.TimeToPass.Seconds()}
	}
	return out
}
