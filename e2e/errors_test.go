package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/cka-lab/lab/e2e/framework"
	"github.com/cka-lab/lab/internal/cluster/hostenv"
	"github.com/cka-lab/lab/kindconfigs"
)

// Every bad input ends in one clear line that says what to do, and changes nothing.
var _ = Describe("errors a learner can hit", Label("errors"), func() {
	It("says when Docker is not installed", func(ctx SpecContext) {
		r := lab.RunEnv(ctx, []string{"PATH=/nonexistent"}, "cluster", "create", "--name", "e2e-nodocker")
		expectOneLineError(r, "docker is not installed")
	})

	It("says when the Docker daemon is not running", func(ctx SpecContext) {
		r := lab.RunEnv(ctx, []string{"DOCKER_HOST=unix:///tmp/lab-e2e-no-daemon.sock"}, "cluster", "create", "--name", "e2e-nodaemon")
		expectOneLineError(r, "the Docker daemon is not running")
	})

	It("says when the user may not use the Docker socket", func(ctx SpecContext) {
		if os.Getuid() != 0 {
			Skip("needs root to run lab as an unprivileged user; hostenv's unit test covers the message")
		}
		state := GinkgoT().TempDir()
		Expect(os.Chmod(state, 0o777)).To(Succeed())
		cmd := lab.Command(ctx, []string{"LAB_STATE_DIR=" + state, "HOME=" + state}, "cluster", "create", "--name", "e2e-noperm")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		expectOneLineError(framework.RunCmd(cmd), "permission denied on the Docker socket")
	})

	It("says when the node image is missing and no registry has it", func(ctx SpecContext) {
		r := lab.Run(ctx, "cluster", "create", "--name", "e2e-noimage", "--image", "kindest/node:v0.0.0-missing")
		expectOneLineError(r, "image kindest/node:v0.0.0-missing is not in the local Docker and could not be pulled")
		Expect(r.Stderr).To(ContainSubstring("docker load"))
	})

	It("says when there is too little free memory", func(ctx SpecContext) {
		r := lab.RunEnv(ctx, []string{"LAB_MEMORY_PER_NODE=4096Gi"}, "cluster", "create", "--name", "e2e-nomem")
		expectOneLineError(r, "too little free memory")
	})

	It("suggests the nearest ids for an unknown scenario, before touching any cluster", func(ctx SpecContext) {
		r := lab.Run(ctx, "start", "taint-dedicated", "--name", "e2e-nocluster")
		expectOneLineError(r, `unknown scenario "taint-dedicated"; did you mean taint-dedicated-node?`)
	})

	It("names file, line and field of a malformed scenario", func(ctx SpecContext) {
		bad := filepath.Join(GinkgoT().TempDir(), "broken.yaml")
		Expect(os.WriteFile(bad, []byte("id: broken\ntitle: x\nstage: scheduling\ndifficulty: easy\nweight: 2\ntimeLimit: 5m\nfaults:\n  - taint: {node: a, key: k, effect: NoSchedule}\n    tolerate: yes\n"), 0o644)).To(Succeed())
		r := lab.Run(ctx, "scenario", "lint", bad)
		Expect(r.Code).To(Equal(1))
		Expect(r.Stderr).To(ContainSubstring(bad + ":9: tolerate: unknown field in Fault"))
	})

	It("rejects invalid flags before any cluster work", func(ctx SpecContext) {
		r := lab.Run(ctx, "cluster", "create", "--name", "e2e-badflag", "--workers", "0")
		expectOneLineError(r, "--workers must be between 1 and")
		r = lab.Run(ctx, "list", "-o", "yaml")
		expectOneLineError(r, `unknown output format "yaml"`)
	})

	Context("with a kind cluster lab did not create", Ordered, func() {
		const foreign = "e2e-notlab"
		var kubeconfig string
		BeforeAll(func(ctx SpecContext) {
			kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
			createForeignCluster(ctx, foreign, kubeconfig)
		}, NodeTimeout(5*time.Minute))

		It("refuses to create over it, start on it, or delete it, naming the cluster", func(ctx SpecContext) {
			for _, args := range [][]string{
				{"cluster", "create", "--name", foreign},
				{"start", "taint-dedicated-node", "--name", foreign},
				{"reset", "--name", foreign},
				{"cluster", "delete", "--name", foreign},
			} {
				r := lab.RunEnv(ctx, []string{"KUBECONFIG=" + kubeconfig}, args...)
				expectOneLineError(r, `kind cluster "`+foreign+`" was not created by lab`)
			}
			Expect(kindcluster.NewProvider().List()).To(ContainElement(foreign))
		})

		It("keeps using its own cluster when KUBECONFIG points at another one", func(ctx SpecContext) {
			r := lab.RunEnv(ctx, []string{"KUBECONFIG=" + kubeconfig}, "status")
			Expect(r.Code).To(Equal(0), "%s", r)
			Expect(r.Stdout).To(ContainSubstring("Cluster " + lab.Cluster))
		})
	})
})

// createForeignCluster makes a one-node kind cluster through kind's Go API, as another tool would.
func createForeignCluster(ctx context.Context, name, kubeconfig string) {
	GinkgoHelper()
	d, err := hostenv.CheckDocker(ctx)
	Expect(err).NotTo(HaveOccurred())
	image := os.Getenv("LAB_NODE_IMAGE")
	if image == "" {
		image = "kindest/node:v1.35.4"
	}
	host, err := hostenv.Probe(ctx, d, image)
	Expect(err).NotTo(HaveOccurred())
	cfg, err := kindconfigs.Render(kindconfigs.Options{Workers: 0, CgroupV1: host.CgroupV1, NoSysResource: host.NoSysResource})
	Expect(err).NotTo(HaveOccurred())
	p := kindcluster.NewProvider()
	_ = p.Delete(name, kubeconfig)
	Expect(p.Create(name, kindcluster.CreateWithV1Alpha4Config(cfg), kindcluster.CreateWithNodeImage(image),
		kindcluster.CreateWithKubeconfigPath(kubeconfig), kindcluster.CreateWithWaitForReady(3*time.Minute))).To(Succeed())
	DeferCleanup(func() { Expect(p.Delete(name, kubeconfig)).To(Succeed()) })
}

// expectOneLineError: as with kind, status lines of the steps that ran may come first; the error is the last
// line, and the only one.
func expectOneLineError(r framework.Result, text string) {
	GinkgoHelper()
	Expect(r.Code).NotTo(Equal(0), "%s", r)
	lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	Expect(last).To(HavePrefix("error: "), "%s", r)
	Expect(last).To(ContainSubstring(text), "%s", r)
	Expect(strings.Count(r.Stderr, "error: ")).To(Equal(1), "%s", r)
}
