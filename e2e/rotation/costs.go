package rotation

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"

	"github.com/cka-lab/lab/scenarios"
)

// Costs are the recorded wall seconds of scenario specs by Spec.ID, as one process of a two-process run on a
// 2-core machine took them: the core specs of every scenario (every run records them) and the extras a run
// took. `hack/e2e-costs.sh` merges a run's JUnit report into costs.json.
type Costs map[string]float64

//go:embed costs.json
var recorded []byte

// Recorded are the costs committed beside this package.
func Recorded() (Costs, error) {
	c := Costs{}
	if err := json.Unmarshal(recorded, &c); err != nil {
		return nil, fmt.Errorf("e2e/rotation/costs.json: %w", err)
	}
	return c, nil
}

// Write saves the costs as the indented JSON the repository keeps, sorted by ID so a diff shows what changed.
func (c Costs) Write(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Defaults stand for a spec of a kind no run has recorded yet, from clean runs' phase medians on 2 cores and
// two processes (start 3 s, a wrong fix's verdict 4 s, a correct fix's 5 s, reset 2 s, each spec's steps and
// status calls about 2 s more; the shortcuts take two verdicts, the net changes a correct fix and three).
var defaults = map[Kind]float64{WrongFix: 14, AltFix: 14, Shortcuts: 18, NetChange: 24, CoreWrongFix: 14, CoreReference: 14}

// Estimator gives every spec a cost: its own recorded one; else, for an extra, its scenario's recorded core
// spec that does the same work (a later wrong fix costs about what the first does, an alternative fix what
// the reference does, the shortcuts a wrong fix and one more verdict); else the median recorded for its kind;
// else a default.
func (c Costs) Estimator(all []*scenarios.Scenario) func(Spec) float64 {
	core := map[string]map[Kind]float64{}
	for _, sc := range all {
		core[sc.ID] = map[Kind]float64{}
		for _, s := range Core(sc) {
			if v, ok := c[s.ID()]; ok {
				core[sc.ID][s.Kind] = v
			}
		}
	}
	byKind := map[Kind][]float64{}
	for _, sc := range all {
		for _, s := range append(Core(sc), Extras(sc)...) {
			if v, ok := c[s.ID()]; ok {
				byKind[s.Kind] = append(byKind[s.Kind], v)
			}
		}
	}
	return func(s Spec) float64 {
		if v, ok := c[s.ID()]; ok {
			return v
		}
		cs := core[s.Scenario]
		switch s.Kind {
		case WrongFix:
			if v, ok := cs[CoreWrongFix]; ok {
				return v
			}
		case AltFix:
			if v, ok := cs[CoreReference]; ok {
				return v
			}
		case Shortcuts:
			if v, ok := cs[CoreWrongFix]; ok {
				return v * 1.3
			}
		case NetChange:
			if v, ok := cs[CoreReference]; ok {
				return v * 1.7
			}
		}
		if v := byKind[s.Kind]; len(v) > 0 {
			return median(v)
		}
		return defaults[s.Kind]
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
