package session

import (
	"context"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/node"
)

// resolver answers scenario vars from the live cluster.
type resolver struct {
	// The scenarios package's Resolver is context-free (scenarios are data); this adapter lives for one
	// Instantiate call, under that call's context.
	ctx context.Context //nolint:containedctx // see above

	c *cluster.Cluster
}

func (r resolver) Nodes(role string) ([]string, error) {
	nl, err := r.c.Kube.CoreV1().Nodes().List(r.ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range nl.Items {
		_, cp := n.Labels["node-role.kubernetes.io/control-plane"]
		if cp == (role == "control-plane") {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (r resolver) Builtin(name string) string {
	switch name {
	case "cluster":
		return r.c.Name
	case "controlPlane":
		cps, _ := r.Nodes("control-plane")
		if len(cps) > 0 {
			return cps[0]
		}
	}
	return ""
}

// CNIConfig is the CNI config file containerd uses on the node.
func (r resolver) CNIConfig(nodeName string) (string, error) {
	n, err := r.c.Node(nodeName)
	if err != nil {
		return "", err
	}
	return node.CNIConfig(r.ctx, n)
}

// CNIPlugin returns the binary that the node's active CNI config's first plugin runs.
func (r resolver) CNIPlugin(nodeName string) (string, error) {
	n, err := r.c.Node(nodeName)
	if err != nil {
		return "", err
	}
	return node.CNIPlugin(r.ctx, n)
}
