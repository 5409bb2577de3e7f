package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/cka-lab/lab/e2e/framework"
)

// A failed spec leaves what it saw behind, so a red CI run can be read without running it again: lab's state
// directory, the journey as `lab explain` traces it, the cluster's Pods and events, and kind's node logs.
var _ = ReportAfterEach(func(r SpecReport) {
	if !r.Failed() || lab == nil {
		return
	}
	dir := filepath.Join(envOr("E2E_ARTIFACTS", filepath.Join(os.TempDir(), "lab-e2e-artifacts")),
		fmt.Sprintf("%s-p%d-%s", time.Now().UTC().Format("150405"), GinkgoParallelProcess(), slug(r.FullText())))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		GinkgoWriter.Printf("artifacts: %v\n", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	collectArtifacts(ctx, dir)
	fmt.Fprintf(os.Stderr, "e2e: artifacts of the failed spec %q are in %s\n", r.FullText(), dir)
})

func collectArtifacts(ctx context.Context, dir string) {
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
	k := framework.Kubectl()
	for name, args := range map[string][]string{
		"pods.txt":   {"get", "pods", "-A", "-o", "wide"},
		"events.txt": {"get", "events", "-A", "--sort-by=.lastTimestamp"},
		"nodes.yaml": {"get", "nodes", "-o", "yaml"},
	} {
		out, err := exec.CommandContext(ctx, k, append([]string{"--kubeconfig", lab.Kubeconfig(), "--request-timeout=20s"}, args...)...).CombinedOutput()
		save(name, out, err)
	}
	out, err := exec.CommandContext(ctx, "cp", "-a", lab.StateDir, filepath.Join(dir, "state")).CombinedOutput()
	if err != nil {
		save("state.error", out, err)
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
