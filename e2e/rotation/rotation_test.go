package rotation

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/cka-lab/lab/scenarios"
)

func builtin(t *testing.T) []*scenarios.Scenario {
	t.Helper()
	cat, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return cat.All()
}

// The slices hold every extra exactly once, each within the budget, balanced by cost, and the same split
// comes out of the same input whatever its order.
func TestSplitCoversEveryExtraOnceWithinBudget(t *testing.T) {
	all := builtin(t)
	extras := AllExtras(all)
	cost := Costs{}.Estimator(all)
	const budget = 1500.0
	sl := Split(extras, cost, budget)
	var total float64
	for _, s := range extras {
		total += cost(s)
	}
	if want := int(total/budget) + 1; len(sl) != want {
		t.Errorf("%d slices for %.0f spec-seconds at %.0f each, want %d (the fewest that fit)", len(sl), total, budget, want)
	}
	seen := map[string]int{}
	var lo, hi float64 = 1e9, 0
	for _, s := range sl {
		var load float64
		for _, x := range s {
			seen[x.ID()]++
			load += cost(x)
		}
		if load > budget {
			t.Errorf("a slice costs %.0f, over the budget %.0f", load, budget)
		}
		lo, hi = min(lo, load), max(hi, load)
	}
	if hi-lo > 30 {
		t.Errorf("slices cost %.0f to %.0f: not balanced", lo, hi)
	}
	for _, s := range extras {
		if seen[s.ID()] != 1 {
			t.Errorf("%s is in %d slices", s.ID(), seen[s.ID()])
		}
	}
	rev := slices.Clone(extras)
	slices.Reverse(rev)
	if again := Split(rev, cost, budget); !slices.EqualFunc(sl, again, func(a, b []Spec) bool { return slices.Equal(a, b) }) {
		t.Error("the split depends on the order of its input")
	}
}

// A run takes the slice its commit count names, so K consecutive commits take every slice once.
func TestConsecutiveCommitsTakeEverySlice(t *testing.T) {
	all := builtin(t)
	o := Options{Budget: 1500, ChangedBudget: 0}
	first := NewPlan(all, Costs{}, o)
	k := len(first.Slices)
	if k < 2 {
		t.Fatalf("want several slices, got %d", k)
	}
	ran := map[string]bool{}
	for c := 100; c < 100+k; c++ {
		o.Commits = c
		p := NewPlan(all, Costs{}, o)
		if p.Slice != c%k {
			t.Errorf("commit count %d takes slice %d, want %d", c, p.Slice, c%k)
		}
		for _, id := range p.Specs() {
			ran[id] = true
		}
	}
	for _, s := range AllExtras(all) {
		if !ran[s.ID()] {
			t.Errorf("%s is run by none of %d consecutive commits", s.ID(), k)
		}
	}
	if p := NewPlan(all, Costs{}, Options{Budget: 1500, All: true}); len(p.Specs()) != len(AllExtras(all)) {
		t.Errorf("all takes %d extras, want %d", len(p.Specs()), len(AllExtras(all)))
	}
}

// A recorded cost wins; an extra with none costs what its scenario's core spec of the same work recorded.
func TestEstimatorPrefersRecordedThenCore(t *testing.T) {
	all := builtin(t)
	var sc *scenarios.Scenario
	for _, s := range all {
		if len(s.WrongFixes) > 1 && len(s.AltFixes) > 0 {
			sc = s
			break
		}
	}
	core := Core(sc)
	ex := Extras(sc)
	c := Costs{core[0].ID(): 11, core[1].ID(): 33, ex[0].ID(): 7}
	est := c.Estimator(all)
	if got := est(ex[0]); got != 7 {
		t.Errorf("recorded extra costs %v, want 7", got)
	}
	for _, s := range ex[1:] {
		want := map[Kind]float64{WrongFix: 11, AltFix: 33, Shortcuts: 11 * 1.3, NetChange: 33 * 1.7}[s.Kind]
		if got := est(s); got != want {
			t.Errorf("%s costs %v, want %v from its scenario's core", s.ID(), got, want)
		}
	}
}

// The scenarios a change touched run their extras whatever the slice, up to the changed budget.
func TestChangedScenariosRunTheirExtras(t *testing.T) {
	all := builtin(t)
	var sc *scenarios.Scenario
	for _, s := range all {
		if s.ID == "bad-image-tag" {
			sc = s
		}
	}
	ch := &Change{edits: []edit{parseDiff([]byte("diff --git a/scenarios/catalog/bad-image-tag.yaml b/scenarios/catalog/bad-image-tag.yaml\n+++ b/x\n+  name: x\n"))}}
	p := NewPlan(all, Costs{}, Options{Budget: 1500, ChangedBudget: 1000, None: true, change: ch})
	if !slices.Equal(p.Changed, []string{"bad-image-tag"}) {
		t.Fatalf("changed = %v", p.Changed)
	}
	for _, s := range Extras(sc) {
		if !p.Runs(s) {
			t.Errorf("%s of the changed scenario does not run", s.ID())
		}
	}
	if got, want := len(p.Specs()), len(Extras(sc)); got != want {
		t.Errorf("%d extras run, want only the changed scenario's %d", got, want)
	}
	if p := NewPlan(all, Costs{}, Options{Budget: 1500, ChangedBudget: 1, None: true, change: ch}); len(p.Specs()) != 0 || !slices.Equal(p.Over, []string{"bad-image-tag"}) {
		t.Errorf("past the changed budget: runs %v, over %v", p.Specs(), p.Over)
	}
}

// A change to a kind's Go code touches the scenarios that use the kind, found by the type on a changed line or
// in the hunk's function header, and a custom function by its name inside an identifier.
func TestChangeToKindCodeTouchesItsScenarios(t *testing.T) {
	all := builtin(t)
	uses := func(ids []string, pred func(*scenarios.Scenario) bool) {
		t.Helper()
		for _, sc := range all {
			if pred(sc) != slices.Contains(ids, sc.ID) {
				t.Errorf("%s: touched %v, uses the kind %v", sc.ID, slices.Contains(ids, sc.ID), pred(sc))
			}
		}
	}
	tolerates := &Change{edits: []edit{parseDiff([]byte("diff --git a/grader/tolerations.go b/grader/tolerations.go\n--- a/grader/tolerations.go\n+++ b/grader/tolerations.go\n@@ -10,2 +10,2 @@ func (e Env) tolerates(ctx context.Context, c *scenarios.TolerationCheck) Result {\n-\treturn x\n+\treturn y\n"))}}
	uses(tolerates.Scenarios(all), func(sc *scenarios.Scenario) bool { types, _ := KindTokens(sc); return types["TolerationCheck"] })
	helm := &Change{edits: []edit{parseDiff([]byte("diff --git a/grader/custom_helm.go b/grader/custom_helm.go\n@@ -1 +1 @@ func checkHelmRelease(ctx context.Context) {\n+\tx := 1\n"))}}
	uses(helm.Scenarios(all), func(sc *scenarios.Scenario) bool {
		_, funcs := KindTokens(sc)
		for f := range funcs {
			if len(f) >= 4 && strings.Contains("checkhelmrelease", strings.ToLower(f)) {
				return true
			}
		}
		return false
	})
	e2eOnly := &Change{edits: []edit{parseDiff([]byte("diff --git a/e2e/x_test.go b/e2e/x_test.go\n+\tscenarios.TolerationCheck{}\n"))}}
	if got := e2eOnly.Scenarios(all); len(got) != 0 {
		t.Errorf("a change to the e2e suite alone touched %v", got)
	}
}

// The reports name each scenario spec by its rotation ID, and a skipped spec is not run.
func TestReadReportsByRotationID(t *testing.T) {
	dir := t.TempDir()
	entry := func(id string) types.ReportEntries {
		return types.ReportEntries{{Name: SpecEntry, Value: types.WrapEntryValue(id)}}
	}
	r := types.Report{SuiteDescription: "lab e2e", SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "a", State: types.SpecStatePassed, RunTime: 12 * time.Second, ReportEntries: entry("x/alt-fix/one")},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "b", State: types.SpecStateSkipped, ReportEntries: entry("x/shortcuts")},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "c", State: types.SpecStatePassed},
	}}
	path := filepath.Join(dir, "junit.xml")
	if err := reporters.GenerateJUnitReport(r, path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadReports(path)
	if err != nil {
		t.Fatal(err)
	}
	if o := got["x/alt-fix/one"]; len(o) != 1 || !o[0].Ran() || o[0].Seconds != 12 {
		t.Errorf("alt fix: %+v", o)
	}
	if o := got["x/shortcuts"]; len(o) != 1 || o[0].Ran() {
		t.Errorf("skipped shortcuts: %+v", o)
	}
	if len(got) != 2 {
		t.Errorf("read %d specs, want the 2 that name an ID", len(got))
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
