package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
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

// recordCPU records the CPU one scenario spec cost (see framework.Lab.CPU).
func recordCPU(scenario string, d time.Duration) {
	AddReportEntry("cpu", timing{scenario, "spec", d.Seconds()}, ReportEntryVisibilityNever)
}

var phases = []string{"create", "start-to-symptom", "wrong-fix-check", "alt-fix", "fix-to-pass", "shortcut-probe", "reset"}

// Report the medians of every phase per scenario once all processes are done.
var _ = ReportAfterSuite("timings", func(r Report) {
	all, cpu := map[string]map[string][]float64{}, map[string][]float64{}
	add := func(e types.ReportEntry) {
		if e.Name != "timing" && e.Name != "cpu" {
			return
		}
		// This process's own entries still hold the value; other processes' arrive as JSON only.
		t, ok := e.Value.GetRawValue().(timing)
		if !ok && json.Unmarshal([]byte(e.Value.AsJSON), &t) != nil {
			return
		}
		if e.Name == "cpu" {
			cpu[t.Scenario] = append(cpu[t.Scenario], t.Seconds)
			return
		}
		if all[t.Scenario] == nil {
			all[t.Scenario] = map[string][]float64{}
		}
		all[t.Scenario][t.Phase] = append(all[t.Scenario][t.Phase], t.Seconds)
	}
	// Busy time is what every process spent in specs and suite nodes: with parallel processes it exceeds the
	// wall time, and what the phases do not account for is the rest of each spec (kubectl steps, checks of
	// lab's own output, waits of the cluster and safety specs).
	var busy time.Duration
	for _, s := range r.SpecReports {
		busy += s.RunTime
		for _, e := range s.ReportEntries {
			add(e)
		}
	}
	printTimings(os.Stdout, all)
	printSplit(os.Stdout, all, r.RunTime, busy, r.SuiteConfig.ParallelTotal)
	printCPU(os.Stdout, cpu, r.RunTime)
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
	fmt.Fprintln(tw, "\nSCENARIO\tPHASE\tMEDIAN\tRUNS\tTOTAL")
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	byPhase := map[string][]float64{}
	for _, n := range names {
		for _, p := range phases {
			if v := all[n][p]; len(v) > 0 {
				fmt.Fprintf(tw, "%s\t%s\t%.1fs\t%d\t%.0fs\n", n, p, median(v), len(v), sum(v))
				if n != "cluster create" {
					byPhase[p] = append(byPhase[p], v...)
				}
			}
		}
	}
	for _, p := range phases {
		if v := byPhase[p]; len(v) > 0 {
			fmt.Fprintf(tw, "ALL SCENARIOS\t%s\t%.1fs\t%d\t%.0fs\n", p, median(v), len(v), sum(v))
		}
	}
	_ = tw.Flush()
}

// printSplit prints where the suite's time went: each phase's total over every scenario and process, and the
// rest, against the wall time, so a slow CI run can be explained from its log alone.
func printSplit(w io.Writer, all map[string]map[string][]float64, wall, busy time.Duration, procs int) {
	total := map[string]float64{}
	var phased float64
	for _, ps := range all {
		for p, v := range ps {
			total[p] += sum(v)
			phased += sum(v)
		}
	}
	fmt.Fprintf(w, "\nSUITE: %.0fs wall on %d process(es), %.0fs busy in specs:", wall.Seconds(), max(procs, 1), busy.Seconds())
	for _, p := range phases {
		if total[p] > 0 {
			fmt.Fprintf(w, " %s %.0fs (%.0f%%),", p, total[p], 100*total[p]/max(busy.Seconds(), 1))
		}
	}
	other := max(busy.Seconds()-phased, 0)
	fmt.Fprintf(w, " other %.0fs (%.0f%%)\n", other, 100*other/max(busy.Seconds(), 1))
}

func sum(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

// printCPU prints what the scenario specs cost in CPU, the costliest scenarios first, against the machine's
// CPU over the suite: on a machine whose cores are the bottleneck, this is where the suite's time goes.
func printCPU(w io.Writer, cpu map[string][]float64, wall time.Duration) {
	if len(cpu) == 0 {
		return
	}
	names := slices.Collect(maps.Keys(cpu))
	sort.Slice(names, func(i, j int) bool { return median(cpu[names[i]]) > median(cpu[names[j]]) })
	every := slices.Sorted(slices.Values(slices.Concat(slices.Collect(maps.Values(cpu))...)))
	fmt.Fprintf(w, "\nCPU: %d scenario specs cost %.0f CPU-s (median %.1f per spec, p10-p90 %.1f-%.1f); the machine's %d cores had %.0f CPU-s in %.0fs and were busy %.0f%% of it; costliest per spec:",
		len(every), sum(every), median(every), every[len(every)/10], every[len(every)*9/10], runtime.NumCPU(), wall.Seconds()*float64(runtime.NumCPU()), wall.Seconds(), 100*machineBusy())
	for i, n := range names[:min(len(names), 12)] {
		if i > 0 {
			fmt.Fprint(w, ",")
		}
		fmt.Fprintf(w, " %s %.1f (%d)", n, median(cpu[n]), len(cpu[n]))
	}
	fmt.Fprintln(w)
}

// The machine's CPU counters when the suite began.
var startBusy, startTotal = readStat()

// readStat returns the machine's busy and total CPU time, in clock ticks, from /proc/stat (zero elsewhere).
func readStat() (busy, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
	for i, v := range f[1:] {
		x, _ := strconv.ParseFloat(v, 64)
		total += x
		if i != 3 && i != 4 { // idle and iowait
			busy += x
		}
	}
	return busy, total
}

// machineBusy is the share of the machine's CPU time that was busy since the suite began.
func machineBusy() float64 {
	b0, t0 := startBusy, startTotal
	b1, t1 := readStat()
	if t1 <= t0 {
		return 0
	}
	return (b1 - b0) / (t1 - t0)
}
