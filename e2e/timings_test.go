package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"text/tabwriter"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// timing is one measured phase, attached to the spec that measured it so parallel processes' figures reach
// the one report the suite prints.
type timing struct {
	Scenario string  `json:"scenario"`
	Phase    string  `json:"phase"`
	Seconds  float64 `json:"seconds"`
}

func recordTiming(scenario, phase string, d time.Duration) {
	AddReportEntry("timing", timing{scenario, phase, d.Seconds()}, ReportEntryVisibilityNever)
}

var phases = []string{"create", "start-to-symptom", "wrong-fix-check", "fix-to-pass", "reset"}

// Report the medians of every phase per scenario once all processes are done.
var _ = ReportAfterSuite("timings", func(r Report) {
	all := map[string]map[string][]float64{}
	add := func(e types.ReportEntry) {
		if e.Name != "timing" {
			return
		}
		// This process's own entries still hold the value; other processes' arrive as JSON only.
		t, ok := e.Value.GetRawValue().(timing)
		if !ok && json.Unmarshal([]byte(e.Value.AsJSON), &t) != nil {
			return
		}
		if all[t.Scenario] == nil {
			all[t.Scenario] = map[string][]float64{}
		}
		all[t.Scenario][t.Phase] = append(all[t.Scenario][t.Phase], t.Seconds)
	}
	for _, s := range r.SpecReports {
		for _, e := range s.ReportEntries {
			add(e)
		}
	}
	printTimings(os.Stdout, all)
	if path := os.Getenv("E2E_TIMINGS"); path != "" {
		out := map[string]map[string]float64{}
		for sc, ps := range all {
			out[sc] = map[string]float64{}
			for p, v := range ps {
				out[sc][p] = median(v)
			}
		}
		b, _ := json.MarshalIndent(out, "", "  ")
		_ = os.WriteFile(path, b, 0o644)
	}
})

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printTimings(w io.Writer, all map[string]map[string][]float64) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSCENARIO\tPHASE\tMEDIAN\tRUNS")
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	byPhase := map[string][]float64{}
	for _, n := range names {
		for _, p := range phases {
			if v := all[n][p]; len(v) > 0 {
				fmt.Fprintf(tw, "%s\t%s\t%.1fs\t%d\n", n, p, median(v), len(v))
				if n != "cluster create" {
					byPhase[p] = append(byPhase[p], v...)
				}
			}
		}
	}
	for _, p := range phases {
		if v := byPhase[p]; len(v) > 0 {
			fmt.Fprintf(tw, "ALL SCENARIOS\t%s\t%.1fs\t%d\n", p, median(v), len(v))
		}
	}
	tw.Flush()
}
