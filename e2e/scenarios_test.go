package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cka-lab/lab/e2e/framework"
	"github.com/cka-lab/lab/e2e/rotation"
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
// fix and the reference solution) runs in every run; the rest as the rotation plans.
var _ = Describe("scenario round trips", Label("scenarios"), func() {
	for _, sc := range catalog().All() {
		Context(sc.ID, Label(sc.ID, string(sc.Stage)), func() {
			rt := roundTrip{sc}
			for _, spec := range rotation.Core(sc) {
				switch spec.Kind {
				case rotation.CoreWrongFix:
					It(fmt.Sprintf("fails the wrong fix %q", spec.Name), func(ctx SpecContext) {
						defer rt.begin(spec)()
						rt.wrongFix(ctx, 0)
					}, SpecTimeout(8*time.Minute))
				case rotation.CoreReference:
					It("passes the reference solution, then resets to the baseline", func(ctx SpecContext) {
						defer rt.begin(spec)()
						rt.start(ctx)
						rt.passes(ctx, rt.instance(ctx).Solution, "fix-to-pass", "the reference solution must pass")
						rt.reset(ctx)
					}, SpecTimeout(8*time.Minute))
				}
			}
		})
	}
})

// The extras (later wrong fixes, alternative fixes, shortcut probes) this run's plan takes: its slice of the
// rotation and the extras of the scenarios its change touched. They are a top-level container of the lowest
// priority, so ginkgo runs them after every other spec and the core has run before E2E_EXTRAS_DEADLINE, a
// guard against a machine much slower than the costs recorded, could stop them.
var _ = func() bool {
	p := plan()
	for _, sc := range catalog().All() {
		Describe("scenario extras", Label("scenarios", sc.ID, string(sc.Stage)), SpecPriority(-1), func() {
			Context(sc.ID, func() {
				rt := roundTrip{sc}
				for _, spec := range rotation.Extras(sc) {
					if !p.Runs(spec) {
						continue
					}
					switch spec.Kind {
					case rotation.WrongFix:
						It(fmt.Sprintf("fails the wrong fix %q", spec.Name), func(ctx SpecContext) {
							defer rt.beginExtra(spec)()
							rt.wrongFix(ctx, spec.Index)
						}, SpecTimeout(8*time.Minute))
					case rotation.AltFix:
						It(fmt.Sprintf("passes the alternative fix %q", spec.Name), func(ctx SpecContext) {
							defer rt.beginExtra(spec)()
							rt.start(ctx)
							rt.passes(ctx, rt.instance(ctx).AltFixes[spec.Index].Run, "alt-fix", "a correct fix made another way must pass")
							rt.reset(ctx)
						}, SpecTimeout(8*time.Minute))
					case rotation.Shortcuts:
						It("fails every shortcut", func(ctx SpecContext) {
							defer rt.beginExtra(spec)()
							rt.shortcuts(ctx)
						}, SpecTimeout(8*time.Minute))
					case rotation.NetChange:
						It("fails every net change the task does not involve, on a fixed cluster", func(ctx SpecContext) {
							defer rt.beginExtra(spec)()
							rt.netChanges(ctx)
						}, SpecTimeout(8*time.Minute))
					}
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

// plan is this run's share of the extras, the same in every parallel process: it depends only on the
// checkout, the catalogue, the recorded costs and the E2E_SLICE* settings.
var plan = sync.OnceValue(func() *rotation.Plan {
	root, err := repoRoot()
	if err != nil {
		panic(err)
	}
	o, err := rotation.OptionsFromEnv(context.Background(), root)
	if err != nil {
		panic(err)
	}
	costs, err := rotation.Recorded()
	if err != nil {
		panic(err)
	}
	return rotation.NewPlan(catalog().All(), costs, o)
})

// repoRoot is the module root above the working directory (ginkgo runs the suite in e2e/).
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no go.mod above %s", wd)
}

// beginExtra begins an extra of the plan, or skips it, named in the report, once the deadline has passed.
func (rt roundTrip) beginExtra(spec rotation.Spec) func() {
	if took := time.Since(suiteStart); took > extrasDeadline {
		AddReportEntry(rotation.SpecEntry, spec.ID(), ReportEntryVisibilityNever)
		Skip(fmt.Sprintf("the suite has run %s, past E2E_EXTRAS_DEADLINE=%s: this extra of the plan is not run now", took.Round(time.Second), extrasDeadline))
	}
	return rt.begin(spec)
}

// roundTrip drives one scenario through lab as a learner would.
type roundTrip struct{ sc *scenarios.Scenario }

// begin names the spec in the report (the rotation reads its cost and whether it ran from there) and
// measures the CPU it costs (its cluster and the commands it runs) until the returned func runs.
func (rt roundTrip) begin(spec rotation.Spec) func() {
	AddReportEntry(rotation.SpecEntry, spec.ID(), ReportEntryVisibilityNever)
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
	workloads := rotation.WorkloadPods(rt.instance(ctx).Checks)
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

// netChanges fixes the cluster with the reference solution, then makes each net change the task does not
// involve that applies to it, one at a time: the check must fail with the unchanged check naming the object,
// and pass again once the change is undone.
func (rt roundTrip) netChanges(ctx context.Context) {
	GinkgoHelper()
	rt.start(ctx)
	inst := rt.instance(ctx)
	rt.passes(ctx, inst.Solution, "fix-to-pass", "the reference solution must pass")
	scope := inst.Scope()
	probes := netChangeProbes(ctx, scope)
	AddReportEntry("net-change probes", fmt.Sprint(len(probes)))
	for _, p := range probes {
		By("the net change: " + p.name)
		rt.run(ctx, []string{p.run})
		r := lab.Run(ctx, "check", "-o", "json")
		recordTiming(rt.sc.ID, "net-change-probe", r.Took)
		Expect(r.Code).To(Equal(1), "the net change %q must fail the check\n%s", p.name, r)
		out := framework.JSON[checkJSON](r)
		var guard *grader.CheckOutcome
		for i, c := range out.Questions[0].Checks {
			if c.Name == scenarios.UnchangedName {
				guard = &out.Questions[0].Checks[i]
			}
		}
		Expect(guard).NotTo(BeNil(), "no %q check in\n%s", scenarios.UnchangedName, r)
		Expect(guard.Passed).To(BeFalse(), "%s", r)
		Expect(guard.Evidence).To(ContainSubstring(p.names), "the report must name what changed")
		AddReportEntry("net change failed", p.name+": "+guard.Evidence)
		rt.run(ctx, []string{p.undo})
	}
	rt.reset(ctx)
}

// netChange is one net change a learner may make instead of, or beside, a fix; names is how the report must
// name its object.
type netChange struct {
	name, run, undo, names string
}

// netChangeProbes are the net changes that apply to the instance: scale to 0 a Deployment of the task's
// namespaces that none of its checks reads, label a namespace the task works in unless the task may relabel
// it, taint a node the task does not name.
func netChangeProbes(ctx context.Context, scope scenarios.Scope) []netChange {
	GinkgoHelper()
	var out []netChange
	for _, ns := range scope.Namespaces {
		if strings.HasPrefix(ns, "kube-") || ns == "default" || ns == "local-path-storage" {
			continue
		}
		if scope.IsOpen(ns) {
			continue
		}
		if d := otherDeployment(ctx, ns, scope); d != "" && len(out) == 0 {
			out = append(out, netChange{
				name:  "Deployment " + d + " in " + ns + ", which the task does not involve, scaled to 0",
				run:   fmt.Sprintf("kubectl -n %s scale deployment %s --replicas=0", ns, d),
				undo:  fmt.Sprintf("kubectl -n %s scale deployment %s --replicas=%s", ns, d, replicasOf(ctx, ns, d)),
				names: "deployment " + d + " -n " + ns,
			})
		}
	}
	for _, ns := range scope.Namespaces {
		if strings.HasPrefix(ns, "kube-") || ns == "default" || ns == "local-path-storage" || scope.Has("Namespace", "", ns) || !namespaceExists(ctx, ns) {
			continue
		}
		out = append(out, netChange{
			name:  "namespace " + ns + " labelled",
			run:   fmt.Sprintf("kubectl label namespace %s lab-probe=net-change", ns),
			undo:  fmt.Sprintf("kubectl label namespace %s lab-probe-", ns),
			names: "namespace " + ns,
		})
		break
	}
	for _, n := range strings.Fields(lab.Shell(ctx, "kubectl get nodes -o jsonpath='{.items[*].metadata.name}'").Stdout) {
		if scope.HasNode(n) {
			continue
		}
		out = append(out, netChange{
			name:  "node " + n + ", which the task does not name, tainted",
			run:   fmt.Sprintf("kubectl taint node %s lab-probe=net-change:NoSchedule", n),
			undo:  fmt.Sprintf("kubectl taint node %s lab-probe-", n),
			names: "node " + n,
		})
		break
	}
	return out
}

// otherDeployment is a Deployment of ns at more than 0 replicas whose Pods none of the task's checks reads
// and which the task does not name; "" when there is none.
func otherDeployment(ctx context.Context, ns string, scope scenarios.Scope) string {
	GinkgoHelper()
	r := lab.Shell(ctx, fmt.Sprintf("kubectl -n %s get deployments -o json", ns))
	if r.Code != 0 {
		return ""
	}
	var list appsv1.DeploymentList
	Expect(json.Unmarshal([]byte(r.Stdout), &list)).To(Succeed())
	for _, d := range list.Items {
		if scope.Has("Deployment", ns, d.Name) || d.Spec.Replicas == nil || *d.Spec.Replicas == 0 {
			continue
		}
		read := false
		for _, p := range scope.Pods {
			sel, err := labels.Parse(p.Selector)
			read = read || p.Namespace == ns && (p.Selector == "" || err == nil && sel.Matches(labels.Set(d.Spec.Template.Labels)))
		}
		for _, s := range scope.Services {
			read = read || s.Namespace == ns && serviceSelects(ctx, ns, s.Name, d.Spec.Template.Labels)
		}
		if !read {
			return d.Name
		}
	}
	return ""
}

// serviceSelects says whether the Service selects Pods labelled lbls (true when it cannot be read: the probe
// then leaves the Deployment alone).
func serviceSelects(ctx context.Context, ns, name string, lbls map[string]string) bool {
	r := lab.Shell(ctx, fmt.Sprintf("kubectl -n %s get service %s -o json", ns, name))
	var svc corev1.Service
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &svc) != nil {
		return true
	}
	return len(svc.Spec.Selector) > 0 && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(lbls))
}

func replicasOf(ctx context.Context, ns, d string) string {
	return strings.TrimSpace(lab.Shell(ctx, fmt.Sprintf("kubectl -n %s get deployment %s -o jsonpath='{.spec.replicas}'", ns, d)).Stdout)
}

func namespaceExists(ctx context.Context, ns string) bool {
	return lab.Shell(ctx, "kubectl get namespace "+ns).Code == 0
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
		"the running Pods' images set in place, their controller left as it is",
		func(w scenarios.PodSelector) string {
			return fmt.Sprintf("kubectl -n %s get pods -l %s -o name | while read -r p; do kubectl -n %s set image \"$p\" '*=nginx:1.27'; done", w.Namespace, w.Selector, w.Namespace)
		},
		func(w scenarios.PodSelector) string {
			return fmt.Sprintf("kubectl -n %s delete pods -l %s --wait=false", w.Namespace, w.Selector)
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
