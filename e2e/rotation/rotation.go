// Package rotation decides which of the e2e suite's extras a run takes, so that every run proves the core and
// any K consecutive runs prove every extra: the extras (each scenario's later wrong fixes, alternative fixes and
// shortcut probes) are split into K slices of about equal recorded cost, K the smallest that fits the budget, a
// run takes the slice its checkout's commit count names, and the extras of the scenarios its last commits
// changed run in every run.
package rotation

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cka-lab/lab/scenarios"
)

// Kind is what an e2e spec of a scenario proves.
type Kind string

const (
	// WrongFix fails a wrong fix after the first (the first is core).
	WrongFix Kind = "wrong-fix"
	// AltFix passes a correct fix made another way than the reference.
	AltFix Kind = "alt-fix"
	// Shortcuts fails every generic shortcut probe on one start.
	Shortcuts Kind = "shortcuts"
	// NetChange fails, on a cluster the reference solution fixed, every net change the task does not
	// involve: another Deployment scaled to 0, the namespace labelled, a node the task does not name tainted.
	NetChange Kind = "net-change"
	// CoreWrongFix and CoreReference are the core specs every run takes; their costs estimate the extras'.
	CoreWrongFix  Kind = "core-wrong-fix"
	CoreReference Kind = "core-reference"
)

// Spec is one scenario spec of the e2e suite.
type Spec struct {
	Scenario string
	Kind     Kind
	// Index is the wrong fix's or alternative fix's position in the scenario; Name its name.
	Index int
	Name  string
}

// ID names the spec across runs, in reports and in the costs file.
func (s Spec) ID() string {
	if s.Name == "" {
		return s.Scenario + "/" + string(s.Kind)
	}
	return s.Scenario + "/" + string(s.Kind) + "/" + s.Name
}

// Core lists the specs every run takes for the scenario: its first wrong fix and its reference solution.
func Core(sc *scenarios.Scenario) []Spec {
	var out []Spec
	if len(sc.WrongFixes) > 0 {
		out = append(out, Spec{Scenario: sc.ID, Kind: CoreWrongFix, Name: sc.WrongFixes[0].Name})
	}
	return append(out, Spec{Scenario: sc.ID, Kind: CoreReference})
}

// Extras lists the scenario's extras in the suite's order.
func Extras(sc *scenarios.Scenario) []Spec {
	var out []Spec
	for i := 1; i < len(sc.WrongFixes); i++ {
		out = append(out, Spec{Scenario: sc.ID, Kind: WrongFix, Index: i, Name: sc.WrongFixes[i].Name})
	}
	for i, af := range sc.AltFixes {
		out = append(out, Spec{Scenario: sc.ID, Kind: AltFix, Index: i, Name: af.Name})
	}
	if ShortcutsApply(sc) {
		out = append(out, Spec{Scenario: sc.ID, Kind: Shortcuts})
	}
	return append(out, Spec{Scenario: sc.ID, Kind: NetChange})
}

// AllExtras lists every scenario's extras.
func AllExtras(all []*scenarios.Scenario) []Spec {
	var out []Spec
	for _, sc := range all {
		out = append(out, Extras(sc)...)
	}
	return out
}

// ShortcutsApply says whether the generic shortcut probes apply to a scenario: its checks want a workload's
// Pods Ready, and its faults break no node or control-plane component (there a bare Pod cannot run either, so
// a shortcut proves nothing and the check waits out minutes of a node or an API server coming back).
func ShortcutsApply(sc *scenarios.Scenario) bool {
	return WorkloadPods(sc.Checks) != nil && !slices.ContainsFunc(sc.Faults, func(f scenarios.Fault) bool {
		return f.NodeFile != nil || f.NodeService != nil || f.Custom != nil
	})
}

// WorkloadPods are the Pods by label, outside the system namespaces, that checks want Ready.
func WorkloadPods(checks []scenarios.Check) []scenarios.PodSelector {
	var out []scenarios.PodSelector
	for _, c := range checks {
		if p := c.PodsReady; p != nil && p.Selector != "" && !strings.HasPrefix(p.Namespace, "kube-") && !slices.Contains(out, p.PodSelector) {
			out = append(out, p.PodSelector)
		}
	}
	return out
}

// Split divides specs into the fewest slices whose cost each stays within budget, balancing them by cost:
// the costliest spec first, each into the slice that costs least so far (ties to the lower slice), so the
// split depends only on the specs and their costs. A spec costlier than the budget gets a slice of its own.
func Split(specs []Spec, cost func(Spec) float64, budget float64) [][]Spec {
	if len(specs) == 0 {
		return nil
	}
	sorted := slices.Clone(specs)
	slices.SortStableFunc(sorted, func(a, b Spec) int {
		if c := cmp.Compare(cost(b), cost(a)); c != 0 {
			return c
		}
		return strings.Compare(a.ID(), b.ID())
	})
	var total float64
	for _, s := range sorted {
		total += cost(s)
	}
	for k := max(1, int(math.Ceil(total/budget))); ; k++ {
		slices, loads := make([][]Spec, k), make([]float64, k)
		for _, s := range sorted {
			i := 0
			for j := range loads {
				if loads[j] < loads[i] {
					i = j
				}
			}
			slices[i] = append(slices[i], s)
			loads[i] += cost(s)
		}
		if k >= len(sorted) || maxOf(loads) <= budget {
			for _, sl := range slices {
				sortByID(sl)
			}
			return slices
		}
	}
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func sortByID(specs []Spec) {
	slices.SortFunc(specs, func(a, b Spec) int { return strings.Compare(a.ID(), b.ID()) })
}

// Plan is what one run of the suite takes of the extras.
type Plan struct {
	// Slices are the extras split by cost; Slice is the one this run takes (0-based), -1 for all of them.
	Slices [][]Spec
	Slice  int
	// Changed are the scenarios the window's commits changed, newest change first, and the extras of those
	// that fit the changed budget run whatever the slice.
	Changed []string
	// Window says which commits and files counted as the change.
	Window string
	// Over are the changed scenarios whose extras did not fit the changed budget (they run in their slice).
	Over []string
	run  map[string]bool
	cost func(Spec) float64
}

// Options set a plan.
type Options struct {
	// Budget is the cost, in spec-seconds, one slice may take; ChangedBudget what the changed scenarios' extras
	// may add to it.
	Budget, ChangedBudget float64
	// Commits is the checkout's commit count: the run takes slice Commits mod K.
	Commits int
	// Slice, when >= 1, forces slice Slice (1-based); All takes every extra; None takes none but the changed.
	Slice     int
	All, None bool
	// Window says which change counted; the change itself decides which scenarios it touched.
	Window string
	change *Change
}

// NewPlan splits the catalogue's extras and picks what this run takes.
func NewPlan(all []*scenarios.Scenario, costs Costs, o Options) *Plan {
	cost := costs.Estimator(all)
	p := &Plan{Slices: Split(AllExtras(all), cost, o.Budget), Window: o.Window, run: map[string]bool{}, cost: cost}
	k := max(len(p.Slices), 1)
	switch {
	case o.All:
		p.Slice = -1
	case o.None:
		p.Slice = -2
	case o.Slice >= 1:
		p.Slice = (o.Slice - 1) % k
	default:
		p.Slice = o.Commits % k
	}
	for i, sl := range p.Slices {
		if p.Slice == -1 || p.Slice == i {
			for _, s := range sl {
				p.run[s.ID()] = true
			}
		}
	}
	byID := map[string]*scenarios.Scenario{}
	for _, sc := range all {
		byID[sc.ID] = sc
	}
	var added float64
	var changed []string
	if o.change != nil {
		changed = o.change.Scenarios(all)
	}
	for _, id := range changed {
		sc := byID[id]
		if sc == nil {
			continue
		}
		p.Changed = append(p.Changed, id)
		var c float64
		for _, s := range Extras(sc) {
			if !p.run[s.ID()] {
				c += cost(s)
			}
		}
		if added+c > o.ChangedBudget {
			p.Over = append(p.Over, id)
			continue
		}
		added += c
		for _, s := range Extras(sc) {
			p.run[s.ID()] = true
		}
	}
	return p
}

// Runs says whether this run takes the extra.
func (p *Plan) Runs(s Spec) bool { return p.run[s.ID()] }

// Cost is the spec's recorded or estimated cost in spec-seconds.
func (p *Plan) Cost(s Spec) float64 { return p.cost(s) }

// Describe says what the run takes and what the other slices hold, for the suite's first and last lines.
func (p *Plan) Describe() string {
	var b strings.Builder
	k := len(p.Slices)
	switch p.Slice {
	case -1:
		fmt.Fprintf(&b, "e2e extras: every slice (%d of them): all %d extras\n", k, p.count())
	case -2:
		fmt.Fprintf(&b, "e2e extras: no slice, only the changed scenarios' extras (%d)\n", p.count())
	default:
		fmt.Fprintf(&b, "e2e extras: slice %d of %d (%d extras, about %.0f spec-seconds), the checkout's commit count mod %d; E2E_SLICE=N runs another\n",
			p.Slice+1, k, len(p.Slices[p.Slice]), p.load(p.Slices[p.Slice]), k)
	}
	fmt.Fprintf(&b, "e2e extras: the change (%s) touched %d scenario(s)", p.Window, len(p.Changed))
	if len(p.Changed) > 0 {
		fmt.Fprintf(&b, ": %s; their extras run in this run", strings.Join(p.Changed, ", "))
	}
	if len(p.Over) > 0 {
		fmt.Fprintf(&b, " except %s's, past the changed budget (they run in their slice)", strings.Join(p.Over, ", "))
	}
	b.WriteString("\n")
	for i, sl := range p.Slices {
		mark := " "
		if i == p.Slice || p.Slice == -1 {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s slice %d of %d: %d extras, %.0f spec-seconds, %d scenarios: %s\n", mark, i+1, k, len(sl), p.load(sl), len(scenariosOf(sl)), strings.Join(scenariosOf(sl), " "))
	}
	return b.String()
}

// Specs lists the extras this run takes, by ID.
func (p *Plan) Specs() []string {
	out := make([]string, 0, len(p.run))
	for id := range p.run {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func (p *Plan) count() int { return len(p.run) }

func (p *Plan) load(sl []Spec) float64 {
	var t float64
	for _, s := range sl {
		t += p.cost(s)
	}
	return t
}

func scenariosOf(sl []Spec) []string {
	var out []string
	for _, s := range sl {
		if !slices.Contains(out, s.Scenario) {
			out = append(out, s.Scenario)
		}
	}
	slices.Sort(out)
	return out
}
