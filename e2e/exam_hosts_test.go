package e2e

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cka-lab/lab/e2e/framework"
	"github.com/cka-lab/lab/internal/coach"
	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/scenarios"
)

// An exam as the CKA gives it since 2025 (issue 23): four questions, each on its own host, answered from the
// hosts' shells. One is fixed by deleting and recreating what the task said to fix in place, one inside its
// running Pods (which the survive step undoes), one from another question's host (scored 0, named), and one
// as it should be; the report says so per question, with each question's timeline from the audit log.
var _ = Describe("an exam on hosts", Ordered, Label("exam-hosts"), func() {
	ids := []string{"bad-image-tag", "readiness-probe-wrong-path", "service-selector-mismatch", "secret-volume-missing"}

	It("grades each question on its host, with survive and coaching", func(ctx SpecContext) {
		r := lab.Run(ctx, "exam", "--scenarios", strings.Join(ids, ","), "--duration", "30m", "--seed", fmt.Sprint(seed))
		Expect(r.Code).To(Equal(0), "%s", r)
		DeferCleanup(func(ctx SpecContext) { lab.Run(ctx, "exam", "stop", "--discard") })
		st := framework.JSON[examStatus](lab.MustRun(ctx, "exam", "status", "-o", "json"))
		Expect(st.Questions).To(HaveLen(4))
		insts := make([]*scenarios.Instance, 4)
		hosts := make([]string, 4)
		for i, q := range st.Questions {
			sc, err := catalog().Get(q.Scenario)
			Expect(err).NotTo(HaveOccurred())
			insts[i], err = sc.WithValues(q.Seed, q.Values)
			Expect(err).NotTo(HaveOccurred())
			hosts[i] = q.Host
			Expect(r.Stdout + lab.MustRun(ctx, "exam", "status").Stdout).To(ContainSubstring(q.Host))
		}
		on := func(host, step string) {
			GinkgoHelper()
			r := lab.Run(ctx, "ssh", host, "--", step)
			Expect(r.Code).To(Equal(0), "on %s: %s\n%s", host, step, r)
		}

		By("Q1 on its host: the Deployment deleted and recreated, though the task says to fix it in place")
		ns1, app1 := insts[0].Values["ns"], insts[0].Values["app"]
		on(hosts[0], fmt.Sprintf(`f=$(mktemp) && kubectl -n %[1]s get deployment %[2]s -o yaml | sed -e '/resourceVersion:/d' -e '/uid:/d' -e 's#image: .*#image: nginx:1.27#' > "$f" &&
			kubectl -n %[1]s delete deployment %[2]s && kubectl apply -f "$f" && rm -f "$f"`, ns1, app1))

		By("Q2 on its host: the page the probe wants written inside the running Pods, not in the Deployment")
		ns2, app2, path2 := insts[1].Values["ns"], insts[1].Values["app"], insts[1].Values["path"]
		on(hosts[1], fmt.Sprintf(`for p in $(kubectl -n %s get pods -l app=%s -o name); do kubectl -n %s exec "$p" -- sh -c 'echo ok > /usr/share/nginx/html%s'; done`,
			ns2, app2, ns2, path2))

		By("Q3 with its reference solution, on Q4's host")
		for _, step := range insts[2].Solution {
			on(hosts[3], step)
		}

		By("Q4 with its reference solution, on its host")
		for _, step := range insts[3].Solution {
			on(hosts[3], step)
		}
		on(hosts[3], fmt.Sprintf("kubectl -n %s rollout status deployment/%s --timeout=2m", insts[3].Values["ns"], insts[3].Values["app"]))

		By("grading, with the survive step exams run by default")
		r = lab.Run(ctx, "exam", "grade", "-o", "json")
		recordTiming("exam-hosts", "exam-grade", r.Took)
		Expect(r.Code).To(Equal(1), "one question of four passes: below the pass mark\n%s", r)
		rep := framework.JSON[exam.Report](r)
		q1, q2, q3, q4 := rep.Questions[0], rep.Questions[1], rep.Questions[2], rep.Questions[3]

		Expect(q1.Timeline).NotTo(BeNil(), "%s", r)
		Expect(q1.Timeline.WrongTurns).To(ContainElement(And(HaveField("Kind", coach.KindRecreated), HaveField("Object", "deployment/"+app1))), "%s", r)

		Expect(q2.Passed).To(BeFalse(), "a fix inside the Pods does not survive their replacement\n%s", r)
		Expect(rep.Survive).To(ContainElement(And(
			HaveField("Disturbance", ContainSubstring("namespace "+ns2)), HaveField("Undid", Not(BeEmpty())))), "%s", r)

		Expect(q3.Passed).To(BeFalse(), "%s", r)
		Expect(q3.Credit).To(BeZero())
		Expect(q3.WrongHost).To(ContainSubstring("on host "+hosts[3]+"; the question was on host "+hosts[2]), "%s", r)
		Expect(q3.Timeline.WrongTurns).To(ContainElement(HaveField("Kind", coach.KindWrongHost)))

		Expect(q4.Passed).To(BeTrue(), "%s", r)
		Expect(q4.Credit).To(BeNumerically("==", q4.Weight))
		Expect(q4.Timeline).NotTo(BeNil())
		Expect(q4.Timeline.WrongTurns).To(BeEmpty(), "%s", r)

		text := lab.MustRun(ctx, "exam", "status").Stdout
		Expect(text).To(ContainSubstring("Timeline"))
		Expect(text).To(ContainSubstring("fixed on the wrong host"))
	}, SpecTimeout(12*time.Minute))
})
