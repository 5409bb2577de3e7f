package injector

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/kube"
	"github.com/cka-lab/lab/scenarios"
)

func init() {
	Register("staticPodManifest", staticPodManifest)
}

// staticPodManifest edits a control-plane component's static Pod manifest (replace args.old with args.new in
// /etc/kubernetes/manifests/<component>.yaml on args.node) and waits until the kubelet has stopped the
// component's running container. A fault applied right after sees the broken component, not the healthy one
// the kubelet had not yet replaced.
func staticPodManifest(ctx context.Context, i *Injector, args map[string]string) error {
	for _, k := range []string{"node", "component", "old"} {
		if args[k] == "" {
			return fmt.Errorf("staticPodManifest: arg %s is required", k)
		}
	}
	n, err := i.node(args["node"])
	if err != nil {
		return err
	}
	before, err := runningContainers(ctx, n, args["component"])
	if err != nil {
		return err
	}
	path := "/etc/kubernetes/manifests/" + args["component"] + ".yaml"
	if err := i.nodeFile(ctx, &scenarios.NodeFileFault{Node: args["node"], Path: path, Replace: &scenarios.Replacement{Old: args["old"], New: args["new"]}}); err != nil {
		return err
	}
	err = kube.Poll(ctx, 500*time.Millisecond, 2*waitTimeout, func(ctx context.Context) (bool, error) {
		now, err := runningContainers(ctx, n, args["component"])
		if err != nil {
			return false, nil
		}
		return !slices.ContainsFunc(before, func(id string) bool { return slices.Contains(now, id) }), nil
	})
	if err != nil {
		return fmt.Errorf("the kubelet on %s did not stop the old %s after %s changed: %w", n, args["component"], path, err)
	}
	return nil
}

// runningContainers lists the IDs of the component's running containers on the node.
func runningContainers(ctx context.Context, n nodes.Node, component string) ([]string, error) {
	out, err := NodeRun(ctx, n, "crictl", "ps", "--name", "^"+component+"$", "--state", "running", "-q")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}
