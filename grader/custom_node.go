package grader

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/journey/evidence"
	"github.com/cka-lab/lab/internal/node"
)

func init() {
	Register("cniDaemonSetReadyOn", cniDaemonSetReadyOn)
}

// cniDaemonSetReadyOn passes when the network add-on's DaemonSet (found by the CNI config directory it mounts,
// whatever its name) runs a Ready Pod on the node (args node): a config copied onto the node by hand makes the
// node Ready without the add-on that keeps its routes and policies.
func cniDaemonSetReadyOn(ctx context.Context, env Env, args map[string]string) Result {
	nodeName := args["node"]
	ds, err := node.CNIDaemonSet(ctx, env.Clients.Kube)
	if err != nil {
		return env.fail("%v", err)
	}
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return env.fail("selector of DaemonSet %s: %v", ds.Name, err)
	}
	pods, err := evidence.Pods(ctx, env.Clients.Kube, ds.Namespace, "", sel.String())
	if err != nil {
		return env.fail("list Pods of DaemonSet %s: %v", ds.Name, err)
	}
	var seen []string
	for _, p := range pods {
		if p.Spec.NodeName != nodeName {
			seen = append(seen, p.Name+" on "+p.Spec.NodeName)
			continue
		}
		if evidence.Ready(&p) {
			return pass("DaemonSet %s/%s runs Ready Pod %s on %s", ds.Namespace, ds.Name, p.Name, nodeName)
		}
		return Result{Evidence: fmt.Sprintf("DaemonSet %s/%s has Pod %s on %s, but it is %s, not Ready", ds.Namespace, ds.Name, p.Name, nodeName, p.Status.Phase), Stage: journey.Sandbox}
	}
	return Result{Evidence: fmt.Sprintf("DaemonSet %s/%s runs no Pod on %s (%d desired in all; Pods: %s)", ds.Namespace, ds.Name, nodeName,
		ds.Status.DesiredNumberScheduled, strings.Join(seen, ", ")), Stage: journey.Sandbox}
}
