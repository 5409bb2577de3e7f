package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cka-lab/lab/e2e/framework"
	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/session"
)

// An exam on two clusters (issue 23): the suite's cluster has one worker, so of two cluster-wide questions
// the one that cordons a worker goes to a second cluster lab creates for the exam, beside a namespaced
// question and a webhook question that stay on the first. Each is fixed from its host with its reference
// solution; the cordoned question's host reaches only the second cluster, and its ssh that cluster's nodes.
var _ = Describe("an exam on two clusters", Ordered, Label("exam-clusters"), func() {
	ids := []string{"bad-image-tag", "webhook-require-limits", "sched-cordoned-node"}

	It("places the second cluster-wide question on a cluster of its own and grades every question", func(ctx SpecContext) {
		second := session.ExamCluster(lab.Cluster)
		r := lab.Run(ctx, "exam", "--scenarios", strings.Join(ids, ","), "--duration", "30m", "--seed", fmt.Sprint(seed))
		recordTiming("exam-clusters", "exam-start", r.Took)
		Expect(r.Code).To(Equal(0), "%s", r)
		DeferCleanup(func(ctx SpecContext) { lab.Run(ctx, "exam", "stop", "--discard") })
		Expect(nodeContainers(ctx, second)).To(ConsistOf(second+"-control-plane", second+"-worker"))

		st := framework.JSON[examStatus](lab.MustRun(ctx, "exam", "status", "-o", "json"))
		Expect(st.Questions).To(HaveLen(3))
		var cordoned int
		for i, q := range st.Questions {
			want := lab.Cluster
			if q.Scenario == "sched-cordoned-node" {
				want, cordoned = second, i
			}
			Expect(q.Cluster).To(Equal(want), "question %d %s", i+1, q.Scenario)
		}
		host := st.Questions[cordoned].Host
		Expect(strings.Fields(lab.MustRun(ctx, "ssh", host, "--", "kubectl get nodes -o name").Stdout)).To(
			ConsistOf("node/"+second+"-control-plane", "node/"+second+"-worker"))
		Expect(strings.TrimSpace(lab.MustRun(ctx, "ssh", host, "--", "ssh worker hostname").Stdout)).To(Equal(second + "-worker"))
		Expect(strings.TrimSpace(lab.MustRun(ctx, "ssh", st.Questions[0].Host, "--", "ssh worker hostname").Stdout)).To(Equal(lab.Cluster + "-worker"))

		By("each question fixed from its host with its reference solution")
		for _, q := range st.Questions {
			sc, err := catalog().Get(q.Scenario)
			Expect(err).NotTo(HaveOccurred())
			inst, err := sc.WithValues(q.Seed, q.Values)
			Expect(err).NotTo(HaveOccurred())
			for _, step := range inst.Solution {
				r := lab.Run(ctx, "ssh", q.Host, "--", step)
				Expect(r.Code).To(Equal(0), "%s on %s: %s\n%s", q.Scenario, q.Host, step, r)
			}
		}

		r = lab.Run(ctx, "exam", "grade", "-o", "json")
		recordTiming("exam-clusters", "exam-grade", r.Took)
		Expect(r.Code).To(Equal(0), "%s", r)
		rep := framework.JSON[exam.Report](r)
		Expect(rep.Percent).To(BeNumerically("==", 100), "%s", r)
		for _, q := range rep.Questions {
			Expect(q.WrongHost).To(BeEmpty(), "%s", r)
		}

		r = lab.Run(ctx, "exam", "stop")
		recordTiming("exam-clusters", "exam-stop", r.Took)
		Expect(r.Code).To(Equal(0), "%s", r)
		Expect(r.Stderr).To(ContainSubstring("matches its baseline"))
		Expect(nodeContainers(ctx, second)).To(BeEmpty(), "lab exam stop deletes the exam's cluster")
		Expect(lab.Run(ctx, "cluster", "status", "--name", second).Code).NotTo(Equal(0))
	}, SpecTimeout(10*time.Minute))
})

// nodeContainers are the Docker containers of kind cluster name's nodes.
func nodeContainers(ctx context.Context, name string) []string {
	GinkgoHelper()
	out, err := exec.CommandContext(ctx, "docker", "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}").Output()
	Expect(err).NotTo(HaveOccurred())
	return strings.Fields(string(out))
}
