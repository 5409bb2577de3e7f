package grader

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/node"
	"github.com/cka-lab/lab/scenarios"
)

func (e Env) nodeTaint(ctx context.Context, c *scenarios.NodeTaintCheck) Result {
	n, err := e.Clients.Kube.CoreV1().Nodes().Get(ctx, c.Node, metav1.GetOptions{})
	if err != nil {
		return e.fail("read node %s: %v", c.Node, err)
	}
	var found []string
	has := false
	for _, t := range n.Spec.Taints {
		found = append(found, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
		if t.Key == c.Key && (c.Effect == "" || string(t.Effect) == c.Effect) {
			has = true
		}
	}
	desc := fmt.Sprintf("node %s has taints [%s]", c.Node, strings.Join(found, ", "))
	if has == c.Present {
		return pass("%s", desc)
	}
	if c.Present {
		return Result{Evidence: desc + fmt.Sprintf(": the taint %s:%s was removed, but the task keeps it", c.Key, c.Effect), Stage: journey.Scheduling}
	}
	return Result{Evidence: desc + fmt.Sprintf(": want no %s taint", c.Key), Stage: journey.Scheduling}
}

func (e Env) nodeReady(ctx context.Context, c *scenarios.NodeReadyCheck) Result {
	n, err := e.Clients.Kube.CoreV1().Nodes().Get(ctx, c.Node, metav1.GetOptions{})
	if err != nil {
		return e.fail("read node %s: %v", c.Node, err)
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type != "Ready" {
			continue
		}
		ready := cond.Status == "True"
		desc := fmt.Sprintf("node %s Ready=%s (%s: %s)", c.Node, cond.Status, cond.Reason, cond.Message)
		if ready == c.Ready {
			return pass("%s", desc)
		}
		return Result{Evidence: desc, Stage: journey.Kubelet}
	}
	return Result{Evidence: fmt.Sprintf("node %s reports no Ready condition", c.Node), Stage: journey.Kubelet}
}

func (e Env) nodeFile(ctx context.Context, c *scenarios.NodeFileCheck) Result {
	ns, err := e.Nodes()
	if err != nil {
		return e.fail("list nodes: %v", err)
	}
	for _, n := range ns {
		if n.String() != c.Node {
			continue
		}
		out, exists, err := node.ReadFile(ctx, n, c.Path)
		if err != nil {
			return e.fail("read %s on %s: %v", c.Path, c.Node, err)
		}
		switch {
		case exists != c.Exists:
			return e.fail("%s on node %s %s", c.Path, c.Node, map[bool]string{true: "exists, want it gone", false: "does not exist"}[exists])
		case exists && !strings.Contains(out, c.Contains):
			return e.fail("%s on node %s does not contain %q", c.Path, c.Node, c.Contains)
		}
		return pass("%s on node %s is as expected", c.Path, c.Node)
	}
	return e.fail("no node %s", c.Node)
}

func (e Env) nodeExec(ctx context.Context, c *scenarios.NodeExecCheck) Result {
	ns, err := e.Nodes()
	if err != nil {
		return e.fail("list nodes: %v", err)
	}
	for _, n := range ns {
		if n.String() != c.Node {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		out, err := node.Run(ctx, n, c.Command[0], c.Command[1:]...)
		cmd := fmt.Sprintf("on %s: %s", c.Node, strings.Join(c.Command, " "))
		switch {
		case c.Fails && err != nil:
			return pass("%s fails as expected", cmd)
		case c.Fails:
			return e.fail("%s succeeds, want it to fail: %s", cmd, snippet([]byte(out)))
		case err != nil:
			return e.fail("%s failed: %s", cmd, snippet([]byte(out)))
		case !strings.Contains(out, c.Contains):
			return e.fail("%s printed %q, want %q", cmd, snippet([]byte(out)), c.Contains)
		}
		return pass("%s: %s", cmd, snippet([]byte(out)))
	}
	return e.fail("no node %s", c.Node)
}

// runningFlag reads a control-plane component's flag from the command line its process runs with on the node:
// what the kubelet started, not what its manifest says, so a manifest fixed but not yet picked up still fails
// and the evidence says so. The process and the manifest are read in one command inside the node.
func (e Env) runningFlag(ctx context.Context, c *scenarios.RunningFlag) Result {
	ns, err := e.Nodes()
	if err != nil {
		return e.fail("list nodes: %v", err)
	}
	path := manifestDir + c.Component + ".yaml"
	script := `p=$(pgrep -n -f '^(\S*/)?` + c.Component + `( |$)') && tr '\0' '\n' < /proc/$p/cmdline; echo ` + manifestMark + `; cat ` + path + ` 2>/dev/null || true`
	for _, n := range ns {
		if n.String() != c.Node {
			continue
		}
		out, err := node.Run(ctx, n, "sh", "-c", script)
		if err != nil {
			return e.fail("read the command line of %s on node %s: %v", c.Component, c.Node, err)
		}
		running, manifest, _ := strings.Cut(out, manifestMark+"\n")
		desc := fmt.Sprintf("the running %s on node %s", c.Component, c.Node)
		if strings.TrimSpace(running) == "" {
			return Result{Evidence: desc + " is not running", Stage: journey.Kubelet}
		}
		value, found := lastFlag(strings.Split(strings.TrimRight(running, "\n"), "\n"), c.Flag)
		got := desc + " has " + flagText(c.Flag, value, found)
		if flagOK(c, value, found) {
			return pass("%s", got)
		}
		// The manifest may already be right: then the kubelet has not restarted the component yet.
		if mv, mfound, err := flagOf(manifest, c.Component, c.Flag); err == nil && flagOK(c, mv, mfound) {
			got += fmt.Sprintf(" (%s already has %s: the kubelet has not restarted it from there yet)", path, flagText(c.Flag, mv, mfound))
		}
		return e.fail("%s, want %s", got, c.Want())
	}
	return e.fail("no node %s", c.Node)
}

// flagOK says whether a flag's value (or its absence) is what the check wants.
func flagOK(c *scenarios.RunningFlag, value string, found bool) bool {
	if c.Enables != "" {
		if !found {
			value = "*"
		}
		return scenarios.EnablesController(value, c.Enables)
	}
	return found && slices.Contains(c.Equals, value)
}

// manifestMark separates a process's arguments from its manifest in runningFlag's output.
const manifestMark = "--- manifest ---"

func flagText(flag, value string, found bool) string {
	if !found {
		return "no --" + flag
	}
	return "--" + flag + "=" + value
}

// flagOf finds a flag in the command line of a static Pod manifest's container named component (or its only
// container): the last --flag=value or --flag value, as the component's flag parsing takes it.
func flagOf(manifest, component, flag string) (value string, found bool, err error) {
	var pod corev1.Pod
	if err := yaml.Unmarshal([]byte(manifest), &pod); err != nil {
		return "", false, fmt.Errorf("not a Pod manifest the kubelet can read: %w", err)
	}
	var args []string
	for _, ctr := range pod.Spec.Containers {
		if ctr.Name == component || len(pod.Spec.Containers) == 1 {
			args = append(slices.Clone(ctr.Command), ctr.Args...)
		}
	}
	value, found = lastFlag(args, flag)
	return value, found, nil
}

// lastFlag is the last --flag=value or --flag value in args, as a component's flag parsing takes it.
func lastFlag(args []string, flag string) (value string, found bool) {
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--"+flag+"="):
			value, found = strings.TrimPrefix(a, "--"+flag+"="), true
		case a == "--"+flag && i+1 < len(args):
			value, found = args[i+1], true
		}
	}
	return value, found
}

// kubeletConfig reads a field of the running kubelet's configuration from its configz endpoint.
func (e Env) kubeletConfig(ctx context.Context, c *scenarios.KubeletConfig) Result {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	raw, err := e.Clients.Kube.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", c.Node, "proxy/configz").DoRaw(ctx)
	if err != nil {
		return Result{Evidence: fmt.Sprintf("the kubelet on %s does not answer for its configuration: %v", c.Node, firstLine(err.Error())), Stage: journey.Kubelet}
	}
	got, err := configField(raw, c.Field)
	if err != nil {
		return e.fail("the kubelet on %s: %v", c.Node, err)
	}
	desc := fmt.Sprintf("the kubelet on %s runs with %s: %q", c.Node, c.Field, got)
	if got == c.Equals {
		return pass("%s", desc)
	}
	return Result{Evidence: fmt.Sprintf("%s, want %q", desc, c.Equals), Stage: journey.Kubelet}
}

// configField finds a dotted path in configz's answer, {"kubeletconfig": {...}}; a missing field reads "".
func configField(raw []byte, field string) (string, error) {
	var z struct {
		KubeletConfig map[string]any `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(raw, &z); err != nil {
		return "", fmt.Errorf("read configz: %w", err)
	}
	var cur any = z.KubeletConfig
	for _, k := range strings.Split(field, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", nil
		}
		cur = m[k]
	}
	if cur == nil {
		return "", nil
	}
	return fmt.Sprint(cur), nil
}
