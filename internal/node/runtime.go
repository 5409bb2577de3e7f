package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// Find returns the node named name among those list returns (a Kubernetes node's name is its container's).
func Find(list func() ([]nodes.Node, error), name string) (nodes.Node, error) {
	ns, err := list()
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		if n.String() == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no node %q in the cluster", name)
}

// Crictl runs crictl on n with a request timeout of 20 s, within 30 s in all: crictl's default of 2 s failed
// a container stop on a busy machine (CI), where stopping an API server and tearing down its container takes
// longer.
func Crictl(ctx context.Context, n nodes.Node, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return Run(ctx, n, "crictl", append([]string{"--timeout", "20s"}, args...)...)
}

// Container is a container as crictl lists it.
type Container struct {
	ID     string            `json:"id"`
	Labels map[string]string `json:"labels"`
}

// RunningContainers lists the running containers named name (exactly) of namespace's Pods on n, as the
// container runtime sees them: a static Pod's, while the API server may be down.
func RunningContainers(ctx context.Context, n nodes.Node, namespace, name string) ([]Container, error) {
	out, err := Crictl(ctx, n, "ps", "--state", "running", "--label", "io.kubernetes.pod.namespace="+namespace,
		"--name", "^"+name+"$", "-o", "json")
	if err != nil {
		return nil, fmt.Errorf("list the %s containers on %s: %w", name, n, err)
	}
	var list struct {
		Containers []Container `json:"containers"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &list); err != nil {
		return nil, fmt.Errorf("read the %s containers on %s: %w", name, n, err)
	}
	return list.Containers, nil
}
