package node

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// CNIConfDir is where every CNI add-on's DaemonSet installs its config on the node.
const CNIConfDir = "/etc/cni/net.d"

// CNIDaemonSet finds the network add-on's DaemonSet in kube-system: the one whose Pods mount the node's CNI
// config directory. lab must not depend on which add-on runs (kindnet for users, kube-router offline).
func CNIDaemonSet(ctx context.Context, c kubernetes.Interface) (*appsv1.DaemonSet, error) {
	dsl, err := c.AppsV1().DaemonSets("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list DaemonSets in kube-system: %w", err)
	}
	for i := range dsl.Items {
		for _, v := range dsl.Items[i].Spec.Template.Spec.Volumes {
			if v.HostPath != nil && strings.TrimSuffix(v.HostPath.Path, "/") == CNIConfDir {
				return &dsl.Items[i], nil
			}
		}
	}
	return nil, fmt.Errorf("no DaemonSet in kube-system mounts %s: which network add-on does this cluster run?", CNIConfDir)
}

// CNIConfig finds the config containerd uses: the first *.conf, *.conflist or *.json in /etc/cni/net.d by name,
// which is the rule CNI's libcni applies. Whatever CNI the node runs (kindnet, kube-router, ...), that file is it.
func CNIConfig(ctx context.Context, n nodes.Node) (string, error) {
	out, err := Run(ctx, n, "ls", "-1", CNIConfDir)
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
		return "", fmt.Errorf("node %s has no CNI config in %s", n, CNIConfDir)
	}
	return CNIConfDir + "/" + names[0], nil
}

// CNIPlugin returns the binary that the active config's first plugin runs.
func CNIPlugin(ctx context.Context, n nodes.Node) (string, error) {
	conf, err := CNIConfig(ctx, n)
	if err != nil {
		return "", err
	}
	out, err := Run(ctx, n, "cat", conf)
	if err != nil {
		return "", err
	}
	return pluginBinary(conf, n.String(), []byte(out))
}

func pluginBinary(conf, node string, data []byte) (string, error) {
	var cfg struct {
		Type    string `json:"type"`
		Plugins []struct {
			Type string `json:"type"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
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
