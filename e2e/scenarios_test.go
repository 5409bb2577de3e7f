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

// Every scenario round-trips on the one shared cluster: start shows the symptom, every wrong fix fails the
// check with an explanation, every alternative fix and the reference solution pass, the generic shortcuts
// fail, and reset returns the cluster to its baseline.
var _ = Describe("scenario round trips", Label("scenarios"), func() {
	cat, err := scenarios.Builtin()
	if err != nil {
		panic(err)
	}
	for _, sc := range cat.All() {
		Context(sc.ID, Ordered, Label(sc.ID, string(sc.Stage)), func() {
			start := func(ctx context.Context) {
				GinkgoHelper()
				r := lab.Run(ctx, "start", sc.ID, "--seed", fmt.Sprint(seed))
				Expect(r.Code).To(Equal(0), "lab start %s --seed %d\n%s", sc.ID, seed, r)
				Expect(r.Stderr).To(ContainSubstring("Waiting until the symptom is observable"))
				Expect(r.Stdout).To(ContainSubstring("Task"))
				recordTiming(sc.ID, "start-to-symptom", r.Took)
			}
			reset := func(ctx context.Context) {
				GinkgoHelper()
				r := lab.Run(ctx, "reset", "-o", "json")
				Expect(r.Code).To(Equal(0), "lab reset\n%s", r)
				Expect(framework.JSON[resetJSON](r).Clean).To(BeTrue(), "%s", r)
				recordTiming(sc.ID, "reset", r.Took)
			}
			run := func(ctx context.Context, steps []string) {
				GinkgoHelper()
				for _, step := range steps {
					r := lab.Shell(ctx, step)
					Expect(r.Code).To(Equal(0), "step: %s\n%s", step, r)
				}
			}
			instance := func(ctx context.Context) *scenarios.Instance {
				GinkgoHelper()
				st := framework.JSON[statusJSON](lab.MustRun(ctx, "status", "-o", "json"))
				inst, err := sc.WithValues(st.Attempt.Seed, st.Attempt.Values)
				Expect(err).NotTo(HaveOccurred())
				return inst
			}

			// passes runs a correct fix and expects full marks, timing it from the fix to the verdict as phase.
			passes := func(ctx context.Context, steps []string, phase, why string) {
				GinkgoHelper()
				t0 := time.Now()
				run(ctx, steps)
				r := lab.Run(ctx, "check", "-o", "json")
				Expect(r.Code).To(Equal(0), "%s\n%s", why, r)
				out := framework.JSON[checkJSON](r)
				Expect(out.Passed).To(BeTrue())
				Expect(out.Score).To(Equal(out.Max))
				recordTiming(sc.ID, phase, time.Since(t0))
			}

			for i, wf := range sc.WrongFixes {
				It(fmt.Sprintf("fails the wrong fix %q", wf.Name), func(ctx SpecContext) {
					if i > 0 && time.Since(suiteStart) > extrasBudget {
						Skip(fmt.Sprintf("the suite has run %s, past E2E_EXTRAS_BUDGET=%s: only the first wrong fix runs now", time.Since(suiteStart).Round(time.Second), extrasBudget))
					}
					start(ctx)
					inst := instance(ctx)
					run(ctx, inst.WrongFixes[i].Run)
					r := lab.Run(ctx, "check", "-o", "json")
					recordTiming(sc.ID, "wrong-fix-check", r.Took)
					Expect(r.Code).To(Equal(1), "a wrong fix must fail the check\n%s", r)
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
					reset(ctx)
				}, SpecTimeout(8*time.Minute))
			}

			for i, af := range sc.AltFixes {
				It(fmt.Sprintf("passes the alternative fix %q", af.Name), func(ctx SpecContext) {
					if time.Since(suiteStart) > extrasBudget {
						Skip(fmt.Sprintf("the suite has run %s, past E2E_EXTRAS_BUDGET=%s: alternative fixes are not run now", time.Since(suiteStart).Round(time.Second), extrasBudget))
					}
					start(ctx)
					passes(ctx, instance(ctx).AltFixes[i].Run, "alt-fix", "a correct fix made another way must pass")
					reset(ctx)
				}, SpecTimeout(8*time.Minute))
			}

			if workloadPods(sc.Checks) != nil && !breaksNodeOrControlPlane(sc) {
				for _, probe := range shortcuts {
					It(fmt.Sprintf("fails the shortcut %q", probe.name), func(ctx SpecContext) {
						if time.Since(suiteStart) > extrasBudget {
							Skip(fmt.Sprintf("the suite has run %s, past E2E_EXTRAS_BUDGET=%s: shortcuts are not probed now", time.Since(suiteStart).Round(time.Second), extrasBudget))
						}
						start(ctx)
						inst := instance(ctx)
						for _, w := range workloadPods(inst.Checks) {
							// Admission may refuse the shortcut; what matters is that the check still fails.
							lab.Shell(ctx, probe.run(w))
						}
						r := lab.Run(ctx, "check", "-o", "json")
						recordTiming(sc.ID, "shortcut-probe", r.Took)
						Expect(r.Code).To(Equal(1), "a shortcut must fail the check\n%s", r)
						reset(ctx)
					}, SpecTimeout(8*time.Minute))
				}
			}

			It("passes the reference solution, then resets to the baseline", func(ctx SpecContext) {
				start(ctx)
				passes(ctx, instance(ctx).Solution, "fix-to-pass", "the reference solution must pass")
				reset(ctx)
			}, SpecTimeout(8*time.Minute))
		})
	}
})

// shortcuts are what a learner may try instead of repairing a workload, applied to every scenario whose
// checks want a workload's Pods Ready in the learner's namespace: none of them may pass.
var shortcuts = []struct {
	name string
	run  func(scenarios.PodSelector) string
}{
	{"a bare Pod with the workload's labels", func(w scenarios.PodSelector) string {
		return fmt.Sprintf("kubectl -n %s run lab-shortcut-bare --image=nginx:1.27 --restart=Never --labels=%s", w.Namespace, w.Selector)
	}},
	{"the running Pods relabelled so their ReplicaSet lets go of them", func(w scenarios.PodSelector) string {
		return fmt.Sprintf("kubectl -n %s label pods -l %s pod-template-hash-", w.Namespace, w.Selector)
	}},
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
