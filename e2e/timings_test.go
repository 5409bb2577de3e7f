package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"sync"
	"text/tabwriter"
	"time"
)

// timings collects durations per scenario and phase, reported as medians at the end of the suite.
type timingSet struct {
	mu sync.Mutex
	d  map[string]map[string][]time.Duration
}

func newTimings() *timingSet { return &timingSet{d: map[string]map[string][]time.Duration{}} }

func (t *timingSet) add(scenario, phase string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.d[scenario] == nil {
		t.d[scenario] = map[string][]time.Duration{}
	}
	t.d[scenario][phase] = append(t.d[scenario][phase], d)
}

var phases = []string{"create", "start-to-symptom", "wrong-fix-check", "fix-to-pass", "reset"}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (t *timingSet) print(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSCENARIO\tPHASE\tMEDIAN\tRUNS")
	names := make([]string, 0, len(t.d))
	for n := range t.d {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, p := range phases {
			if ds := t.d[n][p]; len(ds) > 0 {
				fmt.Fprintf(tw, "%s\t%s\t%.1fs\t%d\n", n, p, median(ds).Seconds(), len(ds))
			}
		}
	}
	tw.Flush()
}

func (t *timingSet) write(path string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]map[string]float64{}
	for n, ps := range t.d {
		out[n] = map[string]float64{}
		for p, ds := range ps {
			out[n][p] = median(ds).Seconds()
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
