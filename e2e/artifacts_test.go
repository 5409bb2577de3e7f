package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/cka-lab/lab/e2e/framework"
)

// A failed spec leaves what it saw behind, next to the run's JUnit report, so a red CI run can be read
// without running it again: the objects of every namespace, the events, the nodes' journal since the spec
// began, lab's state with its last check report, the journey as `lab explain` traces it, and kind's node
// logs. It is taken in a JustAfterEach, which ginkgo runs before the spec's AfterEach and DeferCleanup
// nodes, so a `lab reset` or `lab exam stop` that cleans up has not yet erased what failed; a spec that fails
// only in its cleanup is dumped afterwards.
var dumped string

var _ = JustAfterEach(func() {
	if r := CurrentSpecReport(); r.Failed() {
		dumpFailed(r)
	}
})

var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() && dumped != r.FullText() {
		dumpFailed(r)
	}
})

func dumpFailed(r SpecReport) {
	if lab == nil {
		return
	}
	dumped = r.FullText()
	dir := filepath.Join(artifactsDir(), fmt.Sprintf("%s-p%d-%s", time.Now().UTC().Format("150405"), GinkgoParallelProcess(), slug(r.FullText())))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		GinkgoWriter.Printf("artifacts: %v\n", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	collectArtifacts(ctx, dir, r.StartTime)
	fmt.Fprintf(os.Stderr, "e2e: artifacts of the failed spec %q are in %s\n", r.FullText(), dir)
}

func collectArtifacts(ctx context.Context, dir string, since time.Time) {
	save := func(name string, out []byte, err error) {
		if err != nil {
			out = append(out, []byte("\nerror: "+err.Error()+"\n")...)
		}
		_ = os.WriteFile(filepath.Join(dir, name), out, 0o644)
	}
	explain := lab.Run(ctx, "explain", "-o", "json")
	save("explain.json", []byte(explain.Stdout+explain.Stderr), nil)
	status := lab.Run(ctx, "status", "-o", "json")
	save("status.json", []byte(status.Stdout+status.Stderr), nil)
	cst := lab.Run(ctx, "cluster", "status", "-o", "json")
	save("cluster-status.json", []byte(cst.Stdout+cst.Stderr), nil)
	kubectl := func(args ...string) ([]byte, error) {
		return exec.CommandContext(ctx, framework.Kubectl(), append([]string{"--kubeconfig", lab.Kubeconfig(), "--request-timeout=20s"}, args...)...).CombinedOutput()
	}
	for name, args := range map[string][]string{
		"pods.txt":   {"get", "pods", "-A", "-o", "wide"},
		"events.txt": {"get", "events", "-A", "--sort-by=.lastTimestamp"},
		"nodes.yaml": {"get", "nodes", "-o", "yaml"},
	} {
		out, err := kubectl(args...)
		save(name, out, err)
	}
	// Every namespace's objects, as the scenario and the learner left them.
	if out, err := kubectl("get", "namespaces", "-o", "jsonpath={.items[*].metadata.name}"); err == nil {
		_ = os.MkdirAll(filepath.Join(dir, "namespaces"), 0o755)
		for _, ns := range strings.Fields(string(out)) {
			if ns == "kube-node-lease" || ns == "kube-public" {
				continue
			}
			objs, err := kubectl("get", "-n", ns, "all,configmaps,secrets,serviceaccounts,roles,rolebindings,networkpolicies,persistentvolumeclaims,resourcequotas,limitranges,ingresses,endpointslices", "-o", "yaml")
			save(filepath.Join("namespaces", ns+".yaml"), objs, err)
		}
	} else {
		save("namespaces.error", out, err)
	}
	// The nodes' journal since the spec began: the kubelet's and containerd's account of the failure.
	if nodes, err := kindcluster.NewProvider().ListNodes(lab.Cluster); err == nil {
		for _, n := range nodes {
			out, err := exec.CommandContext(ctx, "docker", "exec", n.String(), "journalctl", "--no-pager", "-o", "short-precise", "--since", fmt.Sprintf("@%d", since.Unix())).CombinedOutput()
			save("journal-"+n.String()+".txt", out, err)
		}
	}
	out, err := exec.CommandContext(ctx, "cp", "-a", lab.StateDir, filepath.Join(dir, "state")).CombinedOutput()
	if err != nil {
		save("state.error", out, err)
	}
	// The last check's report, where lab keeps one per check.
	if reports, _ := filepath.Glob(filepath.Join(lab.StateDir, "clusters", lab.Cluster, "checks", "*", "report.json")); len(reports) > 0 {
		sort.Strings(reports)
		if b, err := os.ReadFile(reports[len(reports)-1]); err == nil {
			save("last-check-report.json", b, nil)
		}
	}
	if err := kindcluster.NewProvider().CollectLogs(lab.Cluster, filepath.Join(dir, "kind-logs")); err != nil {
		save("kind-logs.error", nil, err)
	}
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func slug(s string) string {
	s = unsafe.ReplaceAllString(s, "-")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}
