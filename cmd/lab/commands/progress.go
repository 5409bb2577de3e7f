package commands

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/internal/state/history"
	"github.com/cka-lab/lab/scenarios"
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

func newProgressCmd(f *Factory) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "progress",
		Short: "Show your results per stage: attempts, passes, median time to pass, hints, diagnosis accuracy",
		Long: `progress reads the history lab keeps of your graded attempts (lab check, lab stop, exam questions)
in its state directory, and sums it up per stage of the Pod's journey, so you see where you are slow,
where you need hints and where your diagnosis is off. ` + "`lab drill`" + ` practises the weakest stage.`,
		Example: "  lab progress\n  lab progress -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(output); err != nil {
				return err
			}
			cat, err := f.Catalog()
			if err != nil {
				return err
			}
			attempts, err := readResults()
			if err != nil {
				return err
			}
			attempts = history.Restage(attempts, scenarioStage(cat))
			stats := history.ByStage(attempts, catalogStages(cat))
			weakest, why := history.Weakest(stats, stageLimits(cat))
			if output == "json" {
				out := struct {
					Attempts int           `json:"attempts"`
					Stages   []stageJSON   `json:"stages"`
					Weakest  journey.Stage `json:"weakest"`
					Why      string        `json:"why"`
				}{Attempts: len(attempts), Weakest: weakest, Why: why}
				for _, s := range stats {
					out.Stages = append(out.Stages, stageJSON{s.Stage, s.Attempts, s.Passes, s.MedianTimeToPass.Seconds(), s.Hints, s.Diagnoses, s.DiagnosesCorrect})
				}
				return json.NewEncoder(f.Out).Encode(out)
			}
			t := newTable(f.Out)
			t.AppendHeader(row("STAGE", "ATTEMPTS", "PASSED", "MEDIAN TIME TO PASS", "HINTS", "DIAGNOSIS"))
			for _, s := range stats {
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
			fmt.Fprintf(f.Out, "\nWeakest: %s (%s). `lab drill` practises it.\n", weakest, why)
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return c
}

func newDrillCmd(f *Factory) *cobra.Command {
	o := &startOptions{}
	c := &cobra.Command{
		Use:   "drill",
		Short: "Start a scenario of your weakest stage (untried stages first, then failures, slow fixes, hints, wrong diagnoses)",
		Example: `  lab drill
  lab drill --seed 7`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.hasSeed = cmd.Flags().Changed("seed")
			cat, err := f.Catalog()
			if err != nil {
				return err
			}
			attempts, err := readResults()
			if err != nil {
				return err
			}
			attempts = history.Restage(attempts, scenarioStage(cat))
			stage, why := history.Weakest(history.ByStage(attempts, catalogStages(cat)), stageLimits(cat))
			id := drillScenario(cat, attempts, stage)
			fmt.Fprintf(f.Out, "Drilling %s: %s.\n", stage, why)
			return o.run(cmd.Context(), f, id)
		},
	}
	c.Flags().Int64Var(&o.seed, "seed", 0, "variant seed (random when unset)")
	return c
}

// drillScenario picks within a stage the scenario tried least, then the one not yet passed, in catalogue order.
func drillScenario(cat *scenarios.Catalog, attempts []history.Result, stage journey.Stage) string {
	tries, passed := map[string]int{}, map[string]bool{}
	for _, a := range attempts {
		tries[a.Scenario]++
		passed[a.Scenario] = passed[a.Scenario] || a.Passed
	}
	best := ""
	for _, sc := range cat.All() {
		if sc.Stage != stage {
			continue
		}
		if best == "" || tries[sc.ID] < tries[best] || tries[sc.ID] == tries[best] && !passed[sc.ID] && passed[best] {
			best = sc.ID
		}
	}
	return best
}

// catalogStages are the stages the catalogue has scenarios for, in journey order.
func catalogStages(cat *scenarios.Catalog) []journey.Stage {
	var out []journey.Stage
	for _, st := range journey.Stages() {
		for _, sc := range cat.All() {
			if sc.Stage == st {
				out = append(out, sc.Stage)
				break
			}
		}
	}
	return out
}

// scenarioStage is each scenario's stage today, "" for one the catalogue no longer has.
func scenarioStage(cat *scenarios.Catalog) func(string) journey.Stage {
	return func(id string) journey.Stage {
		if sc, err := cat.Get(id); err == nil {
			return sc.Stage
		}
		return ""
	}
}

// stageLimits is each stage's longest scenario time limit: a fix is slow against the most lenient limit.
func stageLimits(cat *scenarios.Catalog) map[journey.Stage]time.Duration {
	out := map[journey.Stage]time.Duration{}
	for _, sc := range cat.All() {
		out[sc.Stage] = max(out[sc.Stage], sc.TimeLimit.Duration)
	}
	return out
}

func readResults() ([]history.Result, error) {
	path, err := history.Path()
	if err != nil {
		return nil, err
	}
	recs, err := history.Read(path)
	if err != nil {
		return nil, err
	}
	return history.Results(recs), nil
}

// recordHistory appends to the learner's history after grading. Failing to write it is a warning: the grade
// stands without it.
func recordHistory(f *Factory, recs ...history.Record) {
	path, err := history.Path()
	if err == nil {
		err = history.Append(path, recs...)
	}
	if err != nil {
		fmt.Fprintf(f.ErrOut, "warning: could not record your progress: %v\n", err)
	}
}

// attemptRecord is the history record of a practice attempt.
func attemptRecord(event string, a *session.Attempt, stage journey.Stage) history.Record {
	r := history.Record{
		At: time.Now().UTC(), Event: event, Scenario: a.Scenario, Stage: stage, Seed: a.Seed, Started: a.Started,
		Hints: a.Hints, SawSolution: a.SawSolution, Seconds: time.Since(a.Started).Seconds(),
	}
	if c := a.LastCheck; c != nil {
		r.Graded, r.Passed, r.Score, r.Max = true, c.Passed, c.Score, c.Max
	}
	if d := a.Diagnosis; d != nil {
		r.Diagnosis = &history.Diagnosis{Stage: d.Stage, Correct: d.Correct}
	}
	return r
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
	attempts, err := readResults()
	if err != nil {
		fmt.Fprintf(f.ErrOut, "warning: %v\n", err)
	}
	out := map[string]*bestJSON{}
	for id, b := range history.BestByScenario(attempts) {
		out[id] = &bestJSON{b.Score, b.Max, b.Passed, b.TimeToPass.Seconds()}
	}
	return out
}
