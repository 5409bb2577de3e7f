package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/e2e/framework"
	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/cluster/images"
	"github.com/cka-lab/lab/internal/state"
	"github.com/cka-lab/lab/scenarios"
)

type bundleOut struct {
	Images []struct {
		Ref string `json:"ref"`
		ID  string `json:"id"`
	} `json:"images"`
}

type serveOut struct {
	ClassID       string `json:"classId"`
	URL           string `json:"url"`
	Fingerprint   string `json:"fingerprint"`
	Token         string `json:"token"`
	JoinCommand   string `json:"joinCommand"`
	LoginURL      string `json:"loginUrl"`
	InstructorKey string `json:"instructorKey"`
}

// boardOut is the scoreboard as its event stream sends it.
type boardOut struct {
	Learners []struct {
		Name  string             `json:"name"`
		Cells map[string]cellOut `json:"cells"`
	} `json:"learners"`
}

type cellOut struct {
	Status       string `json:"status"`
	ChecksPassed int    `json:"checksPassed"`
	ChecksTotal  int    `json:"checksTotal"`
	Source       string `json:"source"`
}

// Workshops through the built binary, on the suite's cluster: one checked bundle carries every image to a
// machine without a registry; a class runs over TLS on a learner's own cluster, its results marked as the
// learner's lab's; and on a shared cluster learners work side by side, each in a namespace no other learner
// can read, change or connect to, under Pod Security and a quota, graded by the server itself, with
// credentials that die when the learner leaves.
var _ = Describe("workshops", Ordered, Label("workshop"), func() {
	cat, err := scenarios.Builtin()
	if err != nil {
		panic(err)
	}
	image, _ := cat.Get("bad-image-tag")

	It("carries every image in one bundle and refuses a corrupted one", func(ctx SpecContext) {
		dir, err := os.MkdirTemp("", "lab-ws-bundle-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, dir)
		path := filepath.Join(dir, "lab-images.tar")
		// The node image is stood in for by a tiny image of this run's own: removing and loading it back touches
		// no image that other clusters on this machine use, and saves copying the 1.8 GB node image twice.
		node := standInImage(ctx, "lab-e2e-bundle-node:"+lab.Cluster)
		before := images.LocalID(ctx, node)

		r := lab.RunEnv(ctx, []string{"LAB_NODE_IMAGE=" + node}, "bundle", "save", path, "-o", "json")
		Expect(r.Code).To(Equal(0), "lab bundle save\n%s", r)
		fmt.Fprintf(GinkgoWriter, "lab bundle save took %s\n", r.Took.Round(time.Second))
		saved := framework.JSON[bundleOut](r)
		refs := map[string]string{}
		standIn := -1
		for i, img := range saved.Images {
			refs[img.Ref] = img.ID
			if img.Ref == node {
				standIn = i
			}
		}
		Expect(refs).To(HaveKeyWithValue(node, before))
		for _, ref := range cat.Images() {
			Expect(refs).To(HaveKeyWithValue(ref, images.LocalID(ctx, ref)))
		}

		By("removing the node image and loading it back from the bundle")
		removeImage(ctx, node)
		r = lab.MustRun(ctx, "bundle", "load", path, "-o", "json")
		fmt.Fprintf(GinkgoWriter, "lab bundle load took %s\n", r.Took.Round(time.Second))
		for _, img := range framework.JSON[bundleOut](r).Images {
			Expect(img.ID).To(Equal(refs[img.Ref]), "%s came back with another ID", img.Ref)
		}
		Expect(images.LocalID(ctx, node)).To(Equal(before))

		By("refusing a bundle with one flipped byte, naming the file, and loading nothing")
		removeImage(ctx, node)
		name, offset := largestFile(path, fmt.Sprintf("images/%d/", standIn))
		flipByte(path, offset)
		r = lab.Run(ctx, "bundle", "load", path)
		Expect(r.Code).To(Equal(1), "%s", r)
		Expect(lastLine(r.Stderr)).To(HavePrefix("error: bundle " + path + " is refused, nothing was loaded: " + name + ": checksum mismatch"))
		Expect(strings.Count(r.Stderr, "error:")).To(Equal(1), "%s", r)
		Expect(images.LocalID(ctx, node)).To(BeEmpty())
	}, SpecTimeout(10*time.Minute))

	It("runs a class on the learner's own cluster and reports every check", func(ctx SpecContext) {
		srv := serveClass(ctx, "--scenarios", image.ID, "--seed", fmt.Sprint(seed))
		DeferCleanup(func(ctx SpecContext) { lab.Run(ctx, "class", "leave"); lab.Run(ctx, "reset") })
		By("refusing a join that does not pin the server's certificate")
		r := lab.Run(ctx, "class", "join", srv.URL, "--name", "dana", "--token", srv.Token)
		Expect(r.Code).To(Equal(1), "%s", r)
		Expect(lastLine(r.Stderr)).To(ContainSubstring("has a certificate this machine does not trust: join with the --fingerprint of your instructor's join command"))
		r = lab.MustRun(ctx, "class", "join", srv.URL, "--fingerprint", srv.Fingerprint, "--name", "dana", "--token", srv.Token)
		Expect(r.Stdout).To(ContainSubstring("Task"))
		fmt.Fprintf(GinkgoWriter, "$ lab class join\n%s%s", r.Stderr, r.Stdout)
		inst := attemptInstance(lab.MustRun(ctx, "status", "-o", "json"), image.ID)

		r = lab.Run(ctx, "check", "--wait", "0s")
		Expect(r.Code).To(Equal(1), "a broken scenario passed:\n%s", r)
		fmt.Fprintf(GinkgoWriter, "$ lab check --wait 0s\n%s", r.Stdout)
		Expect(boardCell(ctx, srv, "dana", image.ID)).To(And(HaveField("Status", "failed"), HaveField("Source", "self-reported")))
		for _, step := range inst.Solution {
			solveStep(ctx, step, func() framework.Result { return lab.Shell(ctx, step) })
		}
		r = lab.MustRun(ctx, "check")
		fmt.Fprintf(GinkgoWriter, "$ lab check\n%s$ lab class status\n%s", r.Stdout, lab.MustRun(ctx, "class", "status").Stdout)
		Expect(boardCell(ctx, srv, "dana", image.ID)).To(And(HaveField("Status", "passed"), HaveField("Source", "self-reported")))
		Expect(lab.Run(ctx, "class", "next").Stderr).To(ContainSubstring("is the last scenario of class"))
	}, SpecTimeout(10*time.Minute))

	It("gives each learner on a shared cluster a namespace no other learner can reach", func(ctx SpecContext) {
		probe, _ := cat.Get("readiness-probe-wrong-path")
		srv := serveClass(ctx, "--shared-cluster", lab.Kubeconfig(), "--scenarios", probe.ID+","+image.ID, "--seed", fmt.Sprint(seed))
		DeferCleanup(func(ctx SpecContext) {
			k := framework.Kubectl()
			for _, kind := range []string{"namespaces", "clusterrolebindings", "clusterroles"} {
				out, err := exec.CommandContext(ctx, k, "--kubeconfig", lab.Kubeconfig(), "delete", kind, "-l", "lab.cka/class="+srv.ClassID, "--wait=false").CombinedOutput()
				Expect(err).NotTo(HaveOccurred(), "%s", out)
			}
		})
		names := []string{"alice", "bob", "carol.s"}
		ls := make([]*learner, len(names))
		var wg sync.WaitGroup
		for i, name := range names {
			ls[i] = newLearner(name)
			// alice first claims a pass she has not made, as one curl with her key could.
			ls[i].forge = name == "alice"
			wg.Go(func() {
				defer GinkgoRecover()
				ls[i].solve(ctx, srv, probe)
			})
		}
		wg.Wait()

		By("showing every learner's pass on the scoreboard, as the server graded it")
		for _, l := range ls {
			Eventually(func() cellOut { return boardCell(ctx, srv, l.name, probe.ID) }).WithContext(ctx).WithTimeout(2*time.Minute).WithPolling(time.Second).
				Should(And(HaveField("Status", "passed"), HaveField("Source", "server")), "%s", l.name)
			c := boardCell(ctx, srv, l.name, probe.ID)
			Expect(c.ChecksPassed).To(Equal(c.ChecksTotal))
		}

		By("keeping each learner out of the others' namespaces")
		for _, l := range ls {
			Expect(l.kubectl(ctx, "auth", "can-i", "delete", "deployments", "-n", l.ns)).To(Equal("yes"))
			Expect(l.kubectl(ctx, "auth", "can-i", "create", "namespaces")).To(Equal("no"))
			Expect(l.kubectl(ctx, "auth", "can-i", "create", "clusterrolebindings")).To(Equal("no"))
			for _, other := range ls {
				if other == l {
					continue
				}
				for _, verb := range []string{"get", "list", "delete", "patch"} {
					Expect(l.kubectl(ctx, "auth", "can-i", verb, "pods", "-n", other.ns)).To(Equal("no"), "%s %s pods in %s", l.name, verb, other.ns)
				}
				Expect(l.kubectl(ctx, "get", "deployments", "-n", other.ns)).To(ContainSubstring("Forbidden"))
				Expect(l.kubectl(ctx, "delete", "deployment", other.app, "-n", other.ns)).To(ContainSubstring("Forbidden"))
			}
		}

		alice, bob := ls[0], ls[1]
		By("enforcing Pod Security and the quota on a learner's own Pods")
		Expect(alice.apply(ctx, podManifest("privileged", alice.ns, "securityContext: {privileged: true}", ""))).
			To(And(ContainSubstring("violates PodSecurity"), ContainSubstring("privileged")))
		Expect(alice.apply(ctx, podManifest("host-path", alice.ns, "volumeMounts: [{name: host, mountPath: /host}]", "volumes: [{name: host, hostPath: {path: /etc}}]"))).
			To(And(ContainSubstring("violates PodSecurity"), ContainSubstring("hostPath")))
		Expect(alice.apply(ctx, podManifest("too-big", alice.ns, "resources: {requests: {cpu: \"500\", memory: 1Ti}, limits: {cpu: \"500\", memory: 1Ti}}", ""))).
			To(ContainSubstring("exceeded quota: lab-quota"))

		By("refusing a connection from one learner's Pod to another learner's Pod, while the learner's own Pods answer")
		// The client sets no resources: the namespace's defaults let it in under the quota.
		Expect(alice.apply(ctx, podManifest("client", alice.ns, "", ""))).To(ContainSubstring("pod/client created"))
		Expect(alice.kubectl(ctx, "wait", "--for=condition=Ready", "pod/client", "--timeout=120s")).To(ContainSubstring("condition met"))
		podIP := func(l *learner) string {
			pods, err := clients.Kube.CoreV1().Pods(l.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + l.app})
			Expect(err).NotTo(HaveOccurred())
			for _, p := range pods.Items {
				if p.Status.PodIP != "" && p.DeletionTimestamp == nil {
					return p.Status.PodIP
				}
			}
			Fail(fmt.Sprintf("%s has no Pod of %s with an IP", l.ns, l.app))
			return ""
		}
		fetch := func(ip string) string {
			// timeout, not wget's -T, as the scenarios do: the offline image's static busybox crashes on -T.
			return alice.kubectl(ctx, "exec", "client", "--", "timeout", "3", "wget", "-q", "-O-", "http://"+ip+"/")
		}
		own, other := podIP(alice), podIP(bob)
		// A new Pod's policies may take a moment to be programmed.
		Eventually(func() string { return fetch(own) }).WithContext(ctx).WithTimeout(time.Minute).WithPolling(2*time.Second).
			Should(ContainSubstring("Welcome to nginx"), "alice's client reaching alice's nginx")
		Consistently(func() string { return fetch(other) }).WithContext(ctx).WithTimeout(10*time.Second).WithPolling(2*time.Second).
			ShouldNot(ContainSubstring("Welcome to nginx"), "alice's client reaching bob's nginx at %s", other)

		By("keeping another learner's Secrets unreadable")
		secret, err := clients.Kube.CoreV1().Secrets(bob.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bobs-secret"},
			StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(alice.kubectl(ctx, "get", "secret", secret.Name, "-n", bob.ns, "-o", "yaml")).To(And(ContainSubstring("Forbidden"), Not(ContainSubstring("aHVudGVyMg"))))
		Expect(alice.kubectl(ctx, "get", "secrets", "--all-namespaces")).To(ContainSubstring("Forbidden"))
		Expect(alice.kubectl(ctx, "auth", "can-i", "get", "secrets", "--all-namespaces")).To(Equal("no"))
		Expect(alice.kubectl(ctx, "auth", "can-i", "get", "secrets", "-n", alice.ns)).To(Equal("yes"))

		By("emptying each namespace when its learner leaves, and revoking the learner's credentials")
		for _, l := range ls {
			// leave forgets the kubeconfig; a copy is what someone who kept it would try.
			kept, err := os.ReadFile(l.kubeconfig)
			Expect(err).NotTo(HaveOccurred())
			r := l.lab(ctx, "class", "leave")
			Expect(r.Code).To(Equal(0), "%s leaves\n%s", l.name, r)
			Expect(r.Stderr).NotTo(ContainSubstring("warning"), "%s leaves", l.name)
			l.kubeconfig = filepath.Join(l.dir, "kept-kubeconfig")
			Expect(os.WriteFile(l.kubeconfig, kept, 0o600)).To(Succeed())
			// A bound token dies with its ServiceAccount; the API server may take a moment to notice.
			Eventually(func() string { return l.kubectl(ctx, "get", "pods", "-n", l.ns) }).WithContext(ctx).WithTimeout(time.Minute).WithPolling(2*time.Second).
				Should(Or(ContainSubstring("Unauthorized"), ContainSubstring("must be logged in")), "%s's kubeconfig after leaving", l.name)
			// Deleted Deployments go once their garbage collection finishes, which a loaded machine slows down.
			Eventually(func(g Gomega) []appsv1.Deployment {
				left, err := clients.Kube.AppsV1().Deployments(l.ns).List(ctx, metav1.ListOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				return left.Items
			}).WithContext(ctx).WithTimeout(2*time.Minute).WithPolling(2*time.Second).Should(BeEmpty(), "%s keeps Deployments", l.ns)
		}
	}, SpecTimeout(15*time.Minute))
})

// standInImage imports a one-file image under ref, unique to this run, and removes it when the spec ends.
func standInImage(ctx context.Context, ref string) string {
	GinkgoHelper()
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	content := []byte(fmt.Sprintf("lab e2e bundle stand-in %s %d\n", ref, time.Now().UnixNano()))
	Expect(tw.WriteHeader(&tar.Header{Name: "stand-in", Mode: 0o644, Size: int64(len(content))})).To(Succeed())
	_, err := tw.Write(content)
	Expect(err).NotTo(HaveOccurred())
	Expect(tw.Close()).To(Succeed())
	cmd := exec.CommandContext(ctx, "docker", "import", "-", ref)
	cmd.Stdin = &layer
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "docker import: %s", out)
	// Cleanup runs after the spec's context has ended, under a context ginkgo hands it.
	DeferCleanup(func(ctx SpecContext) { //nolint:contextcheck // see above
		if images.LocalID(ctx, ref) != "" {
			removeImage(ctx, ref)
		}
	})
	return ref
}

func removeImage(ctx context.Context, ref string) {
	GinkgoHelper()
	out, err := exec.CommandContext(ctx, "docker", "rmi", ref).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "docker rmi: %s", out)
	Expect(images.LocalID(ctx, ref)).To(BeEmpty())
}

// learner is one machine of a shared-cluster class: its own state directory, then its kubeconfig. A forging
// learner posts a pass before fixing anything.
type learner struct {
	name, dir, ns, app, kubeconfig string
	forge                          bool
}

func newLearner(name string) *learner {
	dir, err := os.MkdirTemp("", "lab-ws-"+name+"-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	return &learner{name: name, dir: dir}
}

func (l *learner) lab(ctx context.Context, args ...string) framework.Result {
	return lab.RunEnv(ctx, []string{"LAB_STATE_DIR=" + l.dir, "KUBECONFIG=" + l.kubeconfig}, args...)
}

// kubectl runs kubectl with the learner's credentials and returns its trimmed answer: stdout, or stderr when it
// printed nothing else. Warnings stay out of it (`can-i create namespaces` warns that namespaces are not
// namespaced, with the kubeconfig's default namespace set, and still answers "no").
func (l *learner) kubectl(ctx context.Context, args ...string) string {
	out, err := exec.CommandContext(ctx, framework.Kubectl(), append([]string{"--kubeconfig", l.kubeconfig}, args...)...).Output()
	var ee *exec.ExitError
	if len(strings.TrimSpace(string(out))) == 0 && errors.As(err, &ee) {
		out = ee.Stderr
	}
	return strings.TrimSpace(string(out))
}

// apply applies a manifest with the learner's credentials and returns kubectl's combined answer.
func (l *learner) apply(ctx context.Context, manifest string) string {
	cmd := exec.CommandContext(ctx, framework.Kubectl(), "--kubeconfig", l.kubeconfig, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	out, _ := cmd.CombinedOutput()
	return strings.TrimSpace(string(out))
}

// podManifest is a busybox Pod that sleeps, with a line added to its container and one to its spec.
func podManifest(name, ns, container, spec string) string {
	m := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: %s}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: busybox:1.36
    command: [sleep, "3600"]
`, name, ns)
	if container != "" {
		m += "    " + container + "\n"
	}
	if spec != "" {
		m += "  " + spec + "\n"
	}
	return m
}

// solve joins, which starts the class's first scenario in the learner's namespace, applies the reference
// solution there with the learner's kubeconfig, and checks.
func (l *learner) solve(ctx context.Context, srv serveOut, sc *scenarios.Scenario) {
	r := l.lab(ctx, "class", "join", srv.URL, "--fingerprint", srv.Fingerprint, "--name", l.name, "--token", srv.Token)
	Expect(r.Code).To(Equal(0), "%s joins\n%s", l.name, r)
	var st struct {
		Namespace string `json:"namespace"`
	}
	Expect(json.Unmarshal([]byte(l.lab(ctx, "class", "status", "-o", "json").Stdout), &st)).To(Succeed())
	l.ns, l.kubeconfig = st.Namespace, filepath.Join(l.dir, "clusters", "shared-"+st.Namespace, "kubeconfig")
	Expect(r.Stdout).To(ContainSubstring("namespace " + l.ns))
	inst := attemptInstance(l.lab(ctx, "status", "-o", "json"), sc.ID)
	Expect(inst.Values["ns"]).To(Equal(l.ns))
	l.app = inst.Values["app"]
	if l.forge {
		l.forgePass(ctx, srv, sc)
	}
	for _, step := range inst.Solution {
		solveStep(ctx, step, func() framework.Result {
			cmd := exec.CommandContext(ctx, "bash", "-eo", "pipefail", "-c", step)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+l.kubeconfig, "PATH="+filepath.Dir(framework.Kubectl())+":"+os.Getenv("PATH"))
			return framework.RunCmd(cmd)
		})
	}
	r = l.lab(ctx, "check", "-o", "json")
	Expect(r.Code).To(Equal(0), "%s checks\n%s", l.name, r)
	Expect(framework.JSON[checkJSON](r).Passed).To(BeTrue())
}

// forgePass posts, with the learner's own key and signature, a check that claims every check passed while
// the namespace is still broken: the server grades the namespace itself and the board shows it failed.
func (l *learner) forgePass(ctx context.Context, srv serveOut, sc *scenarios.Scenario) {
	GinkgoHelper()
	j, err := class.LocalIn(state.At(l.dir)).Current()
	Expect(err).NotTo(HaveOccurred())
	claim := class.Result{Scenario: sc.ID, Event: class.EventCheck, Passed: true, Score: 1, MaxScore: 1, ChecksPassed: 1, ChecksTotal: 1,
		Checks: []class.CheckEvidence{{Name: "everything", Points: 1, Passed: true}}}
	Expect(class.NewClient(j.Membership).Post(ctx, claim)).To(Succeed())
	Eventually(func() cellOut { return boardCell(ctx, srv, l.name, sc.ID) }).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).
		Should(And(HaveField("Status", "failed"), HaveField("Source", "server")), "%s's forged pass", l.name)
}

// solveStep runs one step of a reference solution until it succeeds. The steps are idempotent, and a step that
// waits (rollout status --timeout=90s) can run out of time while several learners' rollouts share a loaded
// machine: then it is run again, within a bound.
func solveStep(ctx context.Context, step string, run func() framework.Result) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		r := run()
		g.Expect(r.Code).To(Equal(0), "step: %s\n%s", step, r)
	}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
}

// serveClass runs `lab class serve` on a free loopback port until the spec ends. It serves https, and what it
// prints carries the certificate's fingerprint in the join command and the key in no address.
func serveClass(ctx context.Context, args ...string) serveOut {
	GinkgoHelper()
	dir, err := os.MkdirTemp("", "lab-ws-class-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	cmd := lab.Command(context.WithoutCancel(ctx), nil, append([]string{"class", "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "-o", "json"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		Expect(cmd.Wait()).To(Succeed(), "lab class serve: %s", stderr.String())
	})
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	Expect(err).NotTo(HaveOccurred(), "lab class serve printed nothing: %s", stderr.String())
	var s serveOut
	Expect(json.Unmarshal(line, &s)).To(Succeed())
	Expect(s.URL).To(HavePrefix("https://"))
	Expect(s.Fingerprint).To(MatchRegexp(`^([0-9A-F]{2}:){31}[0-9A-F]{2}$`))
	Expect(s.JoinCommand).To(Equal(fmt.Sprintf("lab class join %s --fingerprint %s --token %s --name <your-name>", s.URL, s.Fingerprint, s.Token)))
	for _, printed := range []string{s.URL, s.LoginURL, s.JoinCommand} {
		Expect(printed).NotTo(ContainSubstring(s.InstructorKey))
	}
	return s
}

// boardCell reads one cell of the scoreboard from the first board event of the page's stream, over the
// server's pinned certificate.
func boardCell(ctx context.Context, srv serveOut, name, scenario string) cellOut {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/events", nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := class.HTTPClient(srv.Fingerprint).Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var b boardOut
		Expect(json.Unmarshal([]byte(data), &b)).To(Succeed())
		for _, l := range b.Learners {
			if l.Name == name {
				return l.Cells[scenario]
			}
		}
		Fail(fmt.Sprintf("%s is not on the scoreboard: %s", name, data))
	}
	Fail("the scoreboard stream ended without a board")
	return cellOut{}
}

// attemptInstance rebuilds the running attempt's instance from `lab status -o json`.
func attemptInstance(r framework.Result, id string) *scenarios.Instance {
	GinkgoHelper()
	cat, err := scenarios.Builtin()
	Expect(err).NotTo(HaveOccurred())
	sc, err := cat.Get(id)
	Expect(err).NotTo(HaveOccurred())
	st := framework.JSON[statusJSON](r)
	inst, err := sc.WithValues(st.Attempt.Seed, st.Attempt.Values)
	Expect(err).NotTo(HaveOccurred())
	return inst
}

// largestFile finds the largest file under prefix in a tar archive, and where its data starts.
func largestFile(path, prefix string) (string, int64) {
	GinkgoHelper()
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	cr := &countingReader{r: f}
	tr := tar.NewReader(cr)
	var name string
	var offset, size int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		Expect(err).NotTo(HaveOccurred())
		if name != "" && !strings.HasPrefix(h.Name, prefix) {
			break // an image's files are one run
		}
		if strings.HasPrefix(h.Name, prefix) && h.Typeflag == tar.TypeReg && h.Size > size {
			name, offset, size = h.Name, cr.n, h.Size
		}
	}
	Expect(name).NotTo(BeEmpty(), "no file under %s", prefix)
	return name, offset + size/2
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func flipByte(path string, offset int64) {
	GinkgoHelper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, offset)
	Expect(err).NotTo(HaveOccurred())
	b[0] ^= 0xff
	_, err = f.WriteAt(b, offset)
	Expect(err).NotTo(HaveOccurred())
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
