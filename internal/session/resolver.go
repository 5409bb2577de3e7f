package session

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/injector"
	"github.com/cka-lab/lab/internal/cluster"
)

// resolver answers scenario vars from the live cluster.
type resolver struct {
	ctx context.Context
	c   *cluster.Cluster
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

// CNIConfig finds the config containerd uses: the first *.conf, *.conflist or *.json in /etc/cni/net.d by name,
// which is the rule CNI's libcni applies. Whatever CNI the node runs (kindnet, kube-router, ...), that file is it.
func (r resolver) CNIConfig(node string) (string, error) {
	n, err := r.c.Node(node)
	if err != nil {
		return "", err
	}
	out, err := injector.NodeRun(r.ctx, n, "ls", "-1", "/etc/cni/net.d")
	if err != nil {
		return "", err
	}
	var names []string
	for _, f := range strings.Fields(out) {
		if slices.Contains([]string{".conf", ".conflist", ".json"}, path.Ext(f)) {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "", fmt.Errorf("node %s has no CNI config in /etc/cni/net.d", node)
	}
	return "/etc/cni/net.d/" + names[0], nil
}

// CNIPlugin returns the binary that the active config's first plugin runs.
func (r resolver) CNIPlugin(node string) (string, error) {
	conf, err := r.CNIConfig(node)
	if err != nil {
		return "", err
	}
	n, err := r.c.Node(node)
	if err != nil {
		return "", err
	}
	out, err := injector.NodeRun(r.ctx, n, "cat", conf)
	if err != nil {
		return "", err
	}
	var cfg struct {
		Type    string `json:"type"`
		Plugins []struct {
			Type string `json:"type"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(out), &cfg); err != nil {
		return "", fmt.Errorf("parse %s on %s: %w", conf, node, err)
	}
	t := cfg.Type
	if len(cfg.Plugins) > 0 {
		t = cfg.Plugins[0].Type
	}
	if t == "" {
		return "", fmt.Errorf("%s on %s names no plugin type", conf, node)
	}
	return "/opt/cni/bin/" + t, nil
}
