package e2e

import (
	"fmt"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cka-lab/lab/e2e/framework"
)

// A fix made on the Pods passes a plain check, and `lab check --survive` fails it once the Deployment has
// replaced them, naming the disturbance; the reference solution, made in the Deployment, survives.
var _ = Describe("fixes that survive", Ordered, Label("survive"), func() {
	sc, _ := catalog().Get("readiness-probe-wrong-path")

	It("fails a fix made inside the running Pods and passes the reference solution", func(ctx SpecContext) {
		lab.MustRun(ctx, "start", sc.ID, "--seed", fmt.Sprint(seed))
		DeferCleanup(func(ctx SpecContext) { lab.Run(ctx, "reset") })
		st := framework.JSON[statusJSON](lab.MustRun(ctx, "status", "-o", "json"))
		inst, err := sc.WithValues(st.Attempt.Seed, st.Attempt.Values)
		Expect(err).NotTo(HaveOccurred())
		ns, app, path := inst.Values["ns"], inst.Values["app"], inst.Values["path"]

		By("giving nginx in each running Pod the page the probe asks for")
		step := fmt.Sprintf(`for p in $(kubectl -n %s get pods -l app=%s -o name); do kubectl -n %s exec "$p" -- sh -c 'echo ok > /usr/share/nginx/html%s'; done`,
			ns, app, ns, path)
		r := lab.Shell(ctx, step)
		Expect(r.Code).To(Equal(0), "%s\n%s", step, r)

		By("passing a check that does not disturb the cluster")
		r = lab.Run(ctx, "check", "-o", "json")
		Expect(r.Code).To(Equal(0), "the Pod fix passes without --survive\n%s", r)
		Expect(framework.JSON[checkJSON](r).Survive).To(BeEmpty())
		recordTiming(sc.ID, "check", r.Took)

		By("failing it once the Pods are replaced, naming the disturbance")
		r = lab.Run(ctx, "check", "--survive", "-o", "json")
		Expect(r.Code).To(Equal(1), "the Pod fix must not survive\n%s", r)
		recordTiming(sc.ID, "check-survive-undone", r.Took)
		out := framework.JSON[checkJSON](r)
		Expect(out.Passed).To(BeFalse())
		Expect(out.Survive).To(ContainElement(And(
			HaveField("Disturbance", ContainSubstring("delete the workloads' Pods in namespace "+ns)),
			HaveField("Undid", Not(BeEmpty())))), "%s", r)
		undid := out.Survive[0].Undid
		for _, c := range out.Questions[0].Checks {
			if slices.Contains(undid, c.Name) {
				Expect(c.Passed).To(BeFalse())
				Expect(c.Earned).To(Equal(0))
				Expect(c.Evidence).To(ContainSubstring(`undone by "delete the workloads' Pods`))
			}
		}
		By("passing the reference solution with --survive")
		for _, s := range inst.Solution {
			r := lab.Shell(ctx, s)
			Expect(r.Code).To(Equal(0), "step: %s\n%s", s, r)
		}
		r = lab.Run(ctx, "check", "--survive")
		Expect(r.Code).To(Equal(0), "the reference solution survives\n%s", r)
		recordTiming(sc.ID, "check-survive-held", r.Took)
		Expect(r.Stdout).To(ContainSubstring("delete the workloads' Pods in namespace " + ns + ": the fix held"))
	})
})
