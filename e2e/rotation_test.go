package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/cka-lab/lab/e2e/rotation"
)

// artifactsDir is where the run leaves its JUnit report and each failed spec's evidence: E2E_ARTIFACTS (make
// sets a folder per run under bin/e2e/), else a folder in the temporary directory.
func artifactsDir() string {
	return envOr("E2E_ARTIFACTS", filepath.Join(os.TempDir(), "lab-e2e-artifacts"))
}

// printPlan says, before any spec runs, which slice of the extras this run takes and what the others hold.
func printPlan() {
	p := plan()
	fmt.Print(p.Describe())
	fmt.Printf("e2e extras in this run (%d): %s\n", len(p.Specs()), strings.Join(p.Specs(), ", "))
}

// The JUnit report every run leaves (each scenario spec names its rotation ID in a property), and the plan
// again at the end with what became of each of its extras, so a run's log and report say what it proved.
var _ = ReportAfterSuite("rotation", func(r Report) {
	dir := artifactsDir()
	if err := os.MkdirAll(dir, 0o755); err == nil {
		path := filepath.Join(dir, "junit.xml")
		if err := reporters.GenerateJUnitReport(r, path); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: JUnit report: %v\n", err)
		} else {
			fmt.Printf("\ne2e: JUnit report %s (hack/e2e-unrun.sh reads several runs' reports; hack/e2e-costs.sh records their spec times)\n", path)
		}
	}
	state := map[string]types.SpecState{}
	for _, s := range r.SpecReports {
		for _, e := range s.ReportEntries {
			if id, ok := e.Value.GetRawValue().(string); ok && e.Name == rotation.SpecEntry {
				state[id] = s.State
			}
		}
	}
	p := plan()
	fmt.Print("\n" + p.Describe())
	var passed, failed, skipped, missing []string
	for _, id := range p.Specs() {
		switch st, ok := state[id]; {
		case !ok:
			missing = append(missing, id)
		case st == types.SpecStatePassed:
			passed = append(passed, id)
		case st.Is(types.SpecStateFailureStates):
			failed = append(failed, id)
		default:
			skipped = append(skipped, id)
		}
	}
	fmt.Printf("e2e extras of the plan: %d passed, %d failed, %d skipped, %d not reached\n", len(passed), len(failed), len(skipped), len(missing))
	for _, l := range []struct {
		what string
		ids  []string
	}{{"failed", failed}, {"skipped", skipped}, {"not reached", missing}} {
		if len(l.ids) > 0 {
			slices.Sort(l.ids)
			fmt.Printf("e2e extras %s: %s\n", l.what, strings.Join(l.ids, ", "))
		}
	}
})
