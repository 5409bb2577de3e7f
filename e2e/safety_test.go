package e2e

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cka-lab/lab/e2e/framework"
	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/kube"
)

// Safety: an interrupted or concurrent lab leaves a cluster `lab reset` repairs, lab's files stay private,
// and grading reads the cluster, not files a learner can edit.
var _ = Describe("safety and reliability", Label("safety"), func() {
	expectClean := func(ctx context.Context) {
		GinkgoHelper()
		r := lab.Run(ctx, "reset", "-o", "json")
		Expect(r.Code).To(Equal(0), "%s", r)
		Expect(framework.JSON[resetJSON](r).Clean).To(BeTrue(), "%s", r)
	}

	It("recovers from a start interrupted at any point, by signal or kill", func(ctx SpecContext) {
		for _, c := range []struct {
			after time.Duration
			sig   syscall.Signal
		}{{300 * time.Millisecond, syscall.SIGINT}, {1500 * time.Millisecond, syscall.SIGTERM}, {3 * time.Second, syscall.SIGINT}, {2 * time.Second, syscall.SIGKILL}} {
			By("interrupting `lab start` after " + c.after.String() + " with " + c.sig.String())
			cmd := lab.Command(ctx, nil, "start", "cni-plugin-missing", "--seed", "3")
			Expect(cmd.Start()).To(Succeed())
			time.Sleep(c.after)
			Expect(cmd.Process.Signal(c.sig)).To(Succeed())
			_ = cmd.Wait()
			st := lab.Run(ctx, "status")
			Expect(st.Code).To(Equal(0), "%s", st)
			Expect(st.Stdout).To(Or(ContainSubstring("no scenario running"), MatchRegexp("(?i)run `lab reset`"), ContainSubstring("Phase:     active")), "%s", st)
			expectClean(ctx)
			Expect(lab.MustRun(ctx, "status").Stdout).To(ContainSubstring("no scenario running"))
		}
	}, SpecTimeout(10*time.Minute))

	It("lets only one command change the cluster at a time", func(ctx SpecContext) {
		first := lab.Command(ctx, nil, "start", "webhook-require-limits", "--seed", "4")
		Expect(first.Start()).To(Succeed())
		owner := filepath.Join(lab.StateDir, "clusters", lab.Cluster, "lock.owner")
		Eventually(func() (string, error) {
			b, err := os.ReadFile(owner)
			return string(b), err
		}).WithTimeout(time.Minute).WithPolling(50 * time.Millisecond).Should(ContainSubstring("lab start webhook-require-limits"))
		second := lab.RunEnv(ctx, []string{"LAB_LOCK_WAIT=500ms"}, "reset")
		Expect(second.Code).NotTo(Equal(0), "%s", second)
		Expect(second.Stderr).To(MatchRegexp(`cluster \S+ is busy: pid \d+ \(.*lab start webhook-require-limits`))
		Expect(first.Wait()).To(Succeed())
		expectClean(ctx)
	}, SpecTimeout(5*time.Minute))

	It("keeps its files private: 0600 in a 0700 state directory, webhook credentials included", func(ctx SpecContext) {
		// Files an older lab build left behind in a kept state directory are not this build's doing.
		since := time.Now().Add(-time.Second)
		lab.MustRun(ctx, "start", "webhook-require-limits", "--seed", "4")
		lab.Run(ctx, "check", "--wait", "1s")
		secrets := filepath.Join(lab.StateDir, "clusters", lab.Cluster, "secrets")
		Expect(filepath.Join(secrets, "resource-policy", "tls.key")).To(BeAnExistingFile())
		Expect(filepath.WalkDir(lab.StateDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil || info.ModTime().Before(since) {
				return err
			}
			want := fs.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			}
			if info.Mode().Perm() != want {
				return &fs.PathError{Op: "mode " + info.Mode().Perm().String(), Path: path, Err: fs.ErrPermission}
			}
			return nil
		})).To(Succeed())
		expectClean(ctx)
		Expect(secrets).NotTo(BeADirectory())
	})

	It("grades the cluster's record of the attempt, not the local file", func(ctx SpecContext) {
		lab.MustRun(ctx, "start", "readiness-probe-wrong-path", "--seed", "2")
		file := filepath.Join(lab.StateDir, "clusters", lab.Cluster, "attempt.json")
		b, err := os.ReadFile(file)
		Expect(err).NotTo(HaveOccurred())
		var a map[string]any
		Expect(json.Unmarshal(b, &a)).To(Succeed())
		// Point the local record at the healthy kube-system namespace and CoreDNS.
		a["values"] = map[string]string{"ns": "kube-system", "app": "kube-dns", "path": "/"}
		b, _ = json.Marshal(a)
		Expect(os.WriteFile(file, b, 0o600)).To(Succeed())
		r := lab.Run(ctx, "check", "-o", "json", "--wait", "2s")
		Expect(r.Code).To(Equal(1), "%s", r)
		Expect(r.Stdout).NotTo(ContainSubstring("kube-system"))
		expectClean(ctx)
	})

	It("does not pass a workload recreated under the same name without doing the work", func(ctx SpecContext) {
		lab.MustRun(ctx, "start", "readiness-probe-wrong-path", "--seed", "2")
		st := framework.JSON[statusJSON](lab.MustRun(ctx, "status", "-o", "json"))
		ns, app := st.Attempt.Values["ns"], st.Attempt.Values["app"]
		r := lab.Shell(ctx, "kubectl -n "+ns+" delete deployment "+app+" && kubectl -n "+ns+" create deployment "+app+" --image=busybox:1.36 --replicas=2 -- sleep 3600")
		Expect(r.Code).To(Equal(0), "%s", r)
		r = lab.Run(ctx, "check", "-o", "json", "--wait", "20s")
		Expect(r.Code).To(Equal(1), "%s", r)
		expectClean(ctx)
	})

	It("is idempotent: a second reset is clean too", func(ctx SpecContext) {
		expectClean(ctx)
		expectClean(ctx)
	})

	It("detects stopped node containers and recovers them with `lab cluster create`", func(ctx SpecContext) {
		worker := lab.Cluster + "-worker"
		Expect(cluster.StopNode(ctx, worker)).To(Succeed())
		r := lab.Run(ctx, "status")
		Expect(r.Code).NotTo(Equal(0))
		Expect(r.Stderr).To(ContainSubstring("has stopped node containers (" + worker + ")"))
		Expect(r.Stderr).To(ContainSubstring("lab cluster create"))
		st := lab.Run(ctx, "cluster", "status")
		Expect(st.Stdout).To(ContainSubstring("State:    Stopped"))
		lab.MustRun(ctx, "cluster", "create")
		Expect(lab.MustRun(ctx, "cluster", "status").Stdout).To(ContainSubstring("State:    Running"))
		expectClean(ctx)
	}, SpecTimeout(8*time.Minute))

	// Issue 26: a container's cgroup left frozen inside a node (as an interrupted runc leaves it on cgroup v1)
	// makes Docker fail to stop or remove the node: lab reports it, and stops, recovers and deletes anyway.
	It("stops, recovers and deletes a node with a cgroup left frozen in it", func(ctx SpecContext) {
		worker := lab.Cluster + "-worker"
		freezePod := func() {
			GinkgoHelper()
			kubectl(ctx, "delete", "pod", "frozen", "-n", "default", "--ignore-not-found", "--grace-period=0", "--force")
			kubectl(ctx, "run", "frozen", "-n", "default", "--image=busybox:1.36", "--restart=Never",
				`--overrides={"spec":{"nodeName":"`+worker+`"}}`, "--", "sleep", "3600")
			kubectl(ctx, "wait", "-n", "default", "--for=condition=Ready", "pod/frozen", "--timeout=90s")
			// The container's own cgroup, found from its process inside the node, frozen the way runc leaves it.
			out, err := exec.CommandContext(ctx, "docker", "exec", worker, "sh", "-ec", `
id=$(crictl ps --name frozen -q | head -n1)
pid=$(crictl inspect --output go-template --template '{{.info.pid}}' "$id")
if p=$(grep -E '^[0-9]+:freezer:' /proc/$pid/cgroup); then
  echo FROZEN > /sys/fs/cgroup/freezer${p#*:freezer:}/freezer.state
else
  p=$(grep '^0::' /proc/$pid/cgroup); echo 1 > /sys/fs/cgroup${p#0::}/cgroup.freeze
fi`).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "%s", out)
		}

		freezePod()
		st := lab.MustRun(ctx, "cluster", "status")
		Expect(st.Stdout).To(MatchRegexp(`Warning: +node ` + worker + ` has 1 cgroup\(s\) left frozen`))
		var js struct {
			Frozen map[string][]string `json:"frozenCgroups"`
		}
		Expect(json.Unmarshal([]byte(lab.MustRun(ctx, "cluster", "status", "-o", "json").Stdout), &js)).To(Succeed())
		Expect(js.Frozen).To(HaveKey(worker))

		Expect(cluster.StopNode(ctx, worker)).To(Succeed())
		create := lab.MustRun(ctx, "cluster", "create")
		Expect(create.Stderr).To(ContainSubstring("Starting stopped node containers"))
		Expect(lab.MustRun(ctx, "cluster", "status").Stdout).To(ContainSubstring("State:    Running"))

		freezePod()
		del := lab.MustRun(ctx, "cluster", "delete")
		Expect(del.Stdout + del.Stderr).To(ContainSubstring("Thawed 1 cgroup(s) left frozen in node " + worker))
		out, err := exec.CommandContext(ctx, "docker", "ps", "-a", "-q", "--filter", "label=io.x-k8s.kind.cluster="+lab.Cluster).Output()
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.TrimSpace(string(out))).To(BeEmpty(), "node containers left after lab cluster delete")

		// The specs after this one need their cluster back, and clients that know its new certificates.
		lab.MustRun(ctx, "cluster", "create")
		var cerr error
		clients, cerr = kube.FromKubeconfig(lab.Kubeconfig())
		Expect(cerr).NotTo(HaveOccurred())
		expectClean(ctx)
	}, SpecTimeout(10*time.Minute))
})

// kubectl runs kubectl against the lab cluster and expects it to succeed.
func kubectl(ctx context.Context, args ...string) string {
	GinkgoHelper()
	out, err := exec.CommandContext(ctx, framework.Kubectl(), append([]string{"--kubeconfig", lab.Kubeconfig()}, args...)...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl %s\n%s", strings.Join(args, " "), out)
	return string(out)
}
