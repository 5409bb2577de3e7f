package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cka-lab/lab/e2e/framework"
	"github.com/cka-lab/lab/internal/journey"
)

type explainJSON struct {
	Subject string
	journey.Result
}

// lab explain pointed at workloads a learner broke by hand, not through a scenario: no scenario runs, and each
// one must be traced to the stage a CKA instructor would name, from what the cluster shows.
var _ = Describe("explaining workloads broken by hand", Ordered, Label("learner", "explain"), func() {
	It("names the stage where each one stops, and refuses what is not there", func(ctx SpecContext) {
		Expect(lab.MustRun(ctx, "status").Stdout).To(ContainSubstring("no scenario running"))
		r := lab.Run(ctx, "explain")
		Expect(r.Code).NotTo(Equal(0))
		Expect(r.Stderr).To(ContainSubstring("name what to explain (lab explain deploy/web -n shop)"))

		manifest := filepath.Join(framework.RepoRoot(), "internal", "journey", "evidence", "testdata", "broken.yaml")
		shell := func(ctx context.Context, step string) {
			GinkgoHelper()
			r := lab.Shell(ctx, step)
			Expect(r.Code).To(Equal(0), "%s\n%s", step, r)
		}
		shell(ctx, "kubectl create -f "+manifest)
		DeferCleanup(func(ctx SpecContext) { lab.Shell(ctx, "kubectl delete namespace shop --wait --timeout=120s") })
		shell(ctx, "kubectl -n shop rollout status deploy/rollout --timeout=120s")
		// Its next revision never gets Ready (maxUnavailable 0): the old Pods keep serving, and 20 s later the
		// Deployment says it stopped progressing.
		shell(ctx, `kubectl -n shop patch deploy rollout --type=json -p '[{"op":"replace","path":"/spec/progressDeadlineSeconds","value":20},{"op":"replace","path":"/spec/template/spec/containers/0/readinessProbe/httpGet/path","value":"/ready"}]'`)

		explain := func(g Gomega, target string) explainJSON {
			r := lab.Run(ctx, "explain", target, "-n", "shop", "-o", "json")
			g.Expect(r.Code).To(Equal(0), "%s", r)
			return framework.JSON[explainJSON](r)
		}
		for _, tc := range []struct {
			target   string
			stage    journey.Stage
			evidence string
		}{
			{"deploy/unschedulable", journey.Scheduling, "didn't match Pod's node affinity/selector"},
			{"ds/agent", journey.Scheduling, "desires 0 Pods"},
			{"deploy/claim", journey.Volumes, `storageclass.storage.k8s.io "fast" not found`},
			{"deploy/secret-missing", journey.Volumes, `secret "web-tls" not found`},
			{"pod/init-fails", journey.Init, "container wait-db exited Error (exit code 1): last log line: db not reachable"},
			{"deploy/bad-image", journey.Image, `(image "nginx:1.27.99")`},
			{"sts/db", journey.Image, `(image "busybox:9.9")`},
			{"deploy/env-key", journey.Container, "couldn't find key colour in ConfigMap shop/settings"},
			{"job/backup", journey.App, "exit code 3): last log line: cannot reach db"},
			{"deploy/not-ready", journey.Readiness, "Readiness probe failed: HTTP probe failed with statuscode: 404"},
			{"deploy/liveness", journey.Readiness, "Liveness probe failed"},
			{"deploy/lonely", journey.Service, "Service lonely selects app=lonly"},
			{"deploy/wrong-port", journey.Service, "a connection to wrong-port-"},
			{"deploy/fenced", journey.NetworkPolicy, "only from Pods app=frontend in namespace shop; no Pod matches"},
			{"deploy/egress-locked", journey.NetworkPolicy, "allows no egress to port 53"},
			{"deploy/no-dns", journey.DNS, "spec.dnsConfig.nameservers [192.0.2.53]; lookup of kubernetes.default.svc.cluster.local from the Pod"},
			{"deploy/reporter", journey.APIAccess, `secrets is forbidden: User "system:serviceaccount:shop:reporter" cannot list resource "secrets"`},
			{"deploy/healthy", "", ""},
		} {
			By(fmt.Sprintf("explaining %s: %s", tc.target, map[bool]string{true: "every handoff passes", false: string(tc.stage)}[tc.stage == ""]))
			Eventually(func(g Gomega) {
				ex := explain(g, tc.target)
				g.Expect(ex.Stopped).To(Equal(tc.stage), "%s: %s", ex.Subject, ex.Evidence)
				g.Expect(ex.Evidence).To(ContainSubstring(tc.evidence))
			}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		}

		By("telling the rollout that stopped while the old Pods serve")
		Eventually(func(g Gomega) {
			ex := explain(g, "deploy/rollout")
			g.Expect(ex.Stopped).To(Equal(journey.Readiness))
			g.Expect(ex.Notes).To(ContainElement(ContainSubstring("ProgressDeadlineExceeded): ReplicaSet")))
			g.Expect(ex.Notes).To(ContainElement(ContainSubstring("2 Pod(s) of the previous revision still serve")))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

		By("drawing the kubelet's order: a missing Secret stops the volumes, before sandbox and image")
		out := lab.MustRun(ctx, "explain", "deploy/secret-missing", "-n", "shop").Stdout
		Expect(out).To(MatchRegexp(`✓ kubelet \(node\)\s*\n\s+✗ volumes \(claim, attach, mount\)\s+FailedMount`))
		Expect(out).To(MatchRegexp(`· sandbox and network \(CRI, CNI\)\s+not reached`))
		Expect(out).To(MatchRegexp(`· image pull \(app containers\)\s+not reached`))
		Expect(out).To(ContainSubstring("try: kubectl describe pod secret-missing-"))

		By("refusing what is not there, in one line")
		r = lab.Run(ctx, "explain", "deploy/nope", "-n", "shop")
		Expect(r.Code).NotTo(Equal(0))
		Expect(r.Stderr).To(ContainSubstring(`deployment "nope" not found in namespace shop`))
		r = lab.Run(ctx, "explain", "svc/healthy", "-n", "shop")
		Expect(r.Code).NotTo(Equal(0))
		Expect(r.Stderr).To(ContainSubstring("lab explain follows Pods and their controllers"))
	}, SpecTimeout(12*time.Minute))
})
