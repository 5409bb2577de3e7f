package e2e

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cka-lab/lab/e2e/framework"
	"github.com/cka-lab/lab/internal/coach"
	"github.com/cka-lab/lab/scenarios"
)

type coachedCheckJSON struct {
	Passed   bool         `json:"passed"`
	Coaching []coach.Note `json:"coaching"`
}

// Coaching from the API server's audit log (issue 23): `lab check -o json` names how the learner's kubectl
// made the fix, beside the grade.
var _ = Describe("coaching", Ordered, Label("coaching"), func() {
	cat, err := scenarios.Builtin()
	if err != nil {
		panic(err)
	}
	image, _ := cat.Get("bad-image-tag")

	// start starts bad-image-tag and returns its namespace and Deployment.
	start := func(ctx SpecContext) (ns, app string) {
		GinkgoHelper()
		lab.MustRun(ctx, "start", image.ID, "--seed", fmt.Sprint(seed))
		DeferCleanup(func(ctx SpecContext) { lab.Run(ctx, "reset") })
		st := framework.JSON[statusJSON](lab.MustRun(ctx, "status", "-o", "json"))
		return st.Attempt.Values["ns"], st.Attempt.Values["app"]
	}
	shell := func(ctx SpecContext, step string) string {
		GinkgoHelper()
		r := lab.Shell(ctx, step)
		Expect(r.Code).To(Equal(0), "step: %s\n%s", step, r)
		return strings.TrimSpace(r.Stdout)
	}
	check := func(ctx SpecContext) coachedCheckJSON {
		GinkgoHelper()
		// The grade is not what these specs judge: a recreated Deployment fails the scenario's collateral check.
		r := lab.Run(ctx, "check", "-o", "json")
		Expect(r.Code).To(BeElementOf(0, 1), "lab check\n%s", r)
		return framework.JSON[coachedCheckJSON](r)
	}

	It("names a Deployment deleted and recreated when the task said to fix it in place", func(ctx SpecContext) {
		ns, app := start(ctx)
		shell(ctx, fmt.Sprintf(`f=$(mktemp) && kubectl -n %[1]s get deployment %[2]s -o yaml | sed -e '/resourceVersion:/d' -e '/uid:/d' -e 's#image: .*#image: nginx:1.27#' > "$f" &&
			kubectl -n %[1]s delete deployment %[2]s && kubectl apply -f "$f" && rm -f "$f"`, ns, app))
		out := check(ctx)
		Expect(out.Coaching).To(ContainElement(And(
			HaveField("Kind", coach.KindRecreated), HaveField("Object", "deployment/"+app), HaveField("Namespace", ns),
			HaveField("Message", ContainSubstring("the task said to fix it in place")))), "%+v", out.Coaching)
	}, SpecTimeout(5*time.Minute))

	It("names a Pod deleted with --force, and nothing else of a fix made in place", func(ctx SpecContext) {
		ns, app := start(ctx)
		shell(ctx, fmt.Sprintf(`kubectl -n %s set image deployment/%s '*=nginx:1.27' && kubectl -n %[1]s rollout status deployment/%[2]s --timeout=2m`, ns, app))
		// A Pod of the old revision may still be terminating after the rollout: one not being deleted is taken.
		// The first is taken here, not by `| head -1`: head's early exit fails the step under pipefail with kubectl's
		// SIGPIPE (exit 141), as in a clean run.
		pods := strings.Fields(shell(ctx, fmt.Sprintf(`kubectl -n %s get pods -o go-template='{{range .items}}{{if not .metadata.deletionTimestamp}}pod/{{.metadata.name}}{{"\n"}}{{end}}{{end}}'`, ns)))
		Expect(pods).NotTo(BeEmpty())
		pod := pods[0]
		shell(ctx, fmt.Sprintf(`kubectl -n %s delete %s --force --grace-period=0`, ns, pod))
		out := check(ctx)
		Expect(out.Coaching).To(ConsistOf(And(
			HaveField("Kind", coach.KindForced), HaveField("Object", pod), HaveField("Namespace", ns),
			HaveField("Message", ContainSubstring("--force")))), "%+v", out.Coaching)
		Expect(out.Passed).To(BeTrue(), "a forced delete of a replaceable Pod is advice, not a failure")
	}, SpecTimeout(5*time.Minute))
})
