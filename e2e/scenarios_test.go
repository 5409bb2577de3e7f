package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cka-lab/lab/e2e/framework"
	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/scenarios"
)

type checkJSON struct {
	grader.Outcome
	FinalScore int `json:"finalScore"`
}

type statusJSON struct {
	Attempt struct {
		Scenario string            `json:"scenario"`
		Seed     int64             `json:"seed"`
		Values   map[string]string `json:"values"`
	} `json:"attempt"`
}

type resetJSON struct {
	Clean   bool  `json:"clean"`
	Residue []any `json:"residue"`
}

// Every scenario round-trips on the shared cluster of its process: start shows the symptom, every wrong fix
// fails the check with an explanation, every alternative fix and the reference solution pass, the generic
// shortcuts fail, and reset returns the cluster to its baseline. The core of each round trip (the first wrong
// fix and the reference solution) always runs; the rest runs after every other spec, while time is left.
var _ = Describe("scenario round trips", Label("scenarios"), func() {
	for _, sc := range catalog().All() {
		Context(sc.ID, Label(sc.ID, string(sc.Stage)), func() {
			rt := roundTrip{sc}
			if len(sc.WrongFixes) > 0 {
				It(fmt.Sprintf("fails the wrong fix %q", sc.WrongFixes[0].Name), func(ctx SpecContext) {
					defer rt.costs()()
					rt.wrongFix(ctx, 0)
				}, SpecTimeout(8*time.Minute))
			}
			It("passes the reference solution, then resets to the baseline", func(ctx SpecContext) {
				defer rt.costs()()
				rt.start(ctx)
				rt.passes(ctx, rt.instance(ctx).Solution, "fix-to-pass", "the reference solution must pass")
				rt.reset(ctx)
			}, SpecTimeout(8*time.Minute))
		})
	}
})

// The extras (later wrong fixes, alternative fixes, shortcut probes) of each scenario are a top-level
// container of the lowest priority: ginkgo runs them after every other spec, in an order its random seed
// shuffles. So the core of every scenario has run before E2E_EXTRAS_BUDGET stops them on a slow machine, and
// successive runs cover different scenarios' extras when the budget cannot fit them all.
var _ = func() bool {
	for _, sc := range catalog().All() {
		Describe("scenario extras", Label("scenarios", sc.ID, string(sc.Stage)), SpecPriority(-1), func() {
			Context(sc.ID, func() {
				rt := roundTrip{sc}
				for i := 1; i < len(sc.WrongFixes); i++ {
					It(fmt.Sprintf("fails the wrong fix %q", sc.WrongFixes[i].Name), func(ctx SpecContext) {
						skipPastBudget()
						defer rt.costs()()
						rt.wrongFix(ctx, i)
					}, SpecTimeout(8*time.Minute))
				}
				for i, af := range sc.AltFixes {
					It(fmt.Sprintf("passes the alternative fix %q", af.Name), func(ctx SpecContext) {
						skipPastBudget()
						defer rt.costs()()
						rt.start(ctx)
						rt.passes(ctx, rt.instance(ctx).AltFixes[i].Run, "alt-fix", "a correct fix made another way must pass")
						rt.reset(ctx)
					}, SpecTimeout(8*time.Minute))
				}
				if workloadPods(sc.Checks) != nil && !breaksNodeOrControlPlane(sc) {
					It("fails every shortcut", func(ctx SpecContext) {
						skipPastBudget()
						defer rt.costs()()
						rt.shortcuts(ctx)
					}, SpecTimeout(8*time.Minute))
				}
			})
		})
	}
	return true
}()

func catalog() *scenarios.Catalog {
	cat, err := scenarios.Builtin()
	if err != nil {
		panic(err)
	}
	return cat
}

func skipPastBudget() {
	if took := time.Since(suiteStart); took > extrasBudget {
		Skip(fmt.Sprintf("the suite has run %s, past E2E_EXTRAS_BUDGET=%s: the scenarios' extras are not run now", took.Round(time.Second), extrasBudget))
	}
}

// roundTrip drives one scenario through lab as a learner would.
type roundTrip struct{ sc *scenarios.Scenario }

// costs measures the CPU the spec costs (its cluster and the commands it runs) until the returned func runs.
func (rt roundTrip) costs() func() {
	before := lab.CPU()
	return func() { recordCPU(rt.sc.ID, lab.CPU()-before) }
}

func (rt roundTrip) start(ctx context.Context) {
	GinkgoHelper()
	r := lab.Run(ctx, "start", rt.sc.ID, "--seed", fmt.Sprint(seed))
	Expect(r.Code).To(Equal(0), "lab start %s --seed %d\n%s", rt.sc.ID, seed, r)
	Expect(r.Stderr).To(ContainSubstring("Waiting until the symptom is observable"))
	Expect(r.Stdout).To(ContainSubstring("Task"))
	recordTiming(rt.sc.ID, "start-to-symptom", r.Took)
}

func (rt roundTrip) reset(ctx context.Context) {
	GinkgoHelper()
	r := lab.Run(ctx, "reset", "-o", "json")
	Expect(r.Code).To(Equal(0), "lab reset\n%s", r)
	Expect(framework.JSON[resetJSON](r).Clean).To(BeTrue(), "%s", r)
	recordTiming(rt.sc.ID, "reset", r.Took)
}

func (rt roundTrip) run(ctx context.Context, steps []string) {
	GinkgoHelper()
	for _, step := range steps {
		r := lab.Shell(ctx, step)
		Expect(r.Code).To(Equal(0), "step: %s\n%s", step, r)
	}
}

// instance is the running attempt's scenario with the values its start chose.
func (rt roundTrip) instance(ctx context.Context) *scenarios.Instance {
	GinkgoHelper()
	st := framework.JSON[statusJSON](lab.MustRun(ctx, "status", "-o", "json"))
	inst, err := rt.sc.WithValues(st.Attempt.Seed, st.Attempt.Values)
	Expect(err).NotTo(HaveOccurred())
	return inst
}

// fails runs `lab check` and expects it to fail, each failed check saying why.
func (rt roundTrip) fails(ctx context.Context, phase, why string) {
	GinkgoHelper()
	r := lab.Run(ctx, "check", "-o", "json")
	recordTiming(rt.sc.ID, phase, r.Took)
	Expect(r.Code).To(Equal(1), "%s\n%s", why, r)
	out := framework.JSON[checkJSON](r)
	Expect(out.Passed).To(BeFalse())
	var failed []string
	for _, c := range out.Questions[0].Checks {
		if !c.Passed {
			Expect(c.Evidence).NotTo(BeEmpty(), "check %q failed without saying why", c.Name)
			failed = append(failed, c.Name+": "+c.Evidence)
		}
	}
	Expect(failed).NotTo(BeEmpty())
	AddReportEntry("failed checks", strings.Join(failed, "\n"))
}

// passes runs a correct fix and expects full marks, timing it from the fix to the verdict as phase.
func (rt roundTrip) passes(ctx context.Context, steps []string, phase, why string) {
	GinkgoHelper()
	t0 := time.Now()
	rt.run(ctx, steps)
	r := lab.Run(ctx, "check", "-o", "json")
	Expect(r.Code).To(Equal(0), "%s\n%s", why, r)
	out := framework.JSON[checkJSON](r)
	Expect(out.Passed).To(BeTrue())
	Expect(out.Score).To(Equal(out.Max))
	recordTiming(rt.sc.ID, phase, time.Since(t0))
}

func (rt roundTrip) wrongFix(ctx context.Context, i int) {
	GinkgoHelper()
	rt.start(ctx)
	rt.run(ctx, rt.instance(ctx).WrongFixes[i].Run)
	rt.fails(ctx, "wrong-fix-check", "a wrong fix must fail the check")
	rt.reset(ctx)
}

// shortcuts tries every shortcut on one start, undoing each before the next: each is one object or one label
// change, so its undo is exact, and one start and reset serve them all.
func (rt roundTrip) shortcuts(ctx context.Context) {
	GinkgoHelper()
	rt.start(ctx)
	workloads := workloadPods(rt.instance(ctx).Checks)
	for _, probe := range shortcuts {
		By("the shortcut: " + probe.name)
		for _, w := range workloads {
			// Admission may refuse the shortcut; what matters is that the check still fails.
			lab.Shell(ctx, probe.run(w))
		}
		rt.fails(ctx, "shortcut-probe", "a shortcut must fail the check")
		if probe.undo != nil {
			for _, w := range workloads {
				rt.run(ctx, []string{probe.undo(w)})
			}
		}
	}
	rt.reset(ctx)
}

// shortcuts are what a learner may try instead of repairing a workload, applied to every scenario whose
// checks want a workload's Pods Ready in the learner's namespace: none of them may pass. Every one but the
// last has an undo.
var shortcuts = []struct {
	name      string
	run, undo func(scenarios.PodSelector) string
}{
	{
		"a bare Pod with the workload's labels",
		func(w scenarios.PodSelector) string {
			return fmt.Sprintf("kubectl -n %s run lab-shortcut-bare --image=nginx:1.27 --restart=Never --labels=%s", w.Namespace, w.Selector)
		},
		func(w scenarios.PodSelector) string {
			return fmt.Sprintf("kubectl -n %s delete pod lab-shortcut-bare --ignore-not-found --grace-period=0 --force --wait", w.Namespace)
		},
	},
	{
		"the running Pods relabelled so their ReplicaSet lets go of them",
		func(w scenarios.PodSelector) string {
			return fmt.Sprintf("kubectl -n %s label pods -l %s pod-template-hash-", w.Namespace, w.Selector)
		},
		nil,
	},
}

// breaksNodeOrControlPlane says whether a scenario's faults break a node or a control-plane component (files
// and services on nodes, custom faults): there a bare Pod cannot run either, so a shortcut proves nothing and
// the check waits out minutes of a node or an API server coming back.
func breaksNodeOrControlPlane(sc *scenarios.Scenario) bool {
	return slices.ContainsFunc(sc.Faults, func(f scenarios.Fault) bool {
		return f.NodeFile != nil || f.NodeService != nil || f.Custom != nil
	})
}

// workloadPods are the Pods by label, outside the system namespaces, that checks want Ready.
func workloadPods(checks []scenarios.Check) []scenarios.PodSelector {
	var out []scenarios.PodSelector
	for _, c := range checks {
		if p := c.PodsReady; p != nil && p.Selector != "" && !strings.HasPrefix(p.Namespace, "kube-") && !slices.Contains(out, p.PodSelector) {
			out = append(out, p.PodSelector)
		}
	}
	return out
}
