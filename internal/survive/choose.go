// Package survive disturbs the cluster as a real one disturbs itself once a fix passes (the workloads' Pods
// replaced, a node's kubelet or containerd restarted, a static Pod restarted, its boot-time sysctl settings
// applied), grades again and tells which
// disturbance undid which check: a fix made on a Pod or in a node's runtime state alone does not outlast them.
package survive

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/cka-lab/lab/scenarios"
)

// Kind is what a disturbance does.
type Kind string

// The disturbances, in the order they run: the cheapest first, the one that takes a node away last.
const (
	DeletePods        Kind = "delete-pods"
	ReapplySysctl     Kind = "reapply-sysctl"
	RestartStaticPod  Kind = "restart-static-pod"
	RestartContainerd Kind = "restart-containerd"
	RestartKubelet    Kind = "restart-kubelet"
)

var order = []Kind{DeletePods, ReapplySysctl, RestartStaticPod, RestartContainerd, RestartKubelet}

// PodSet is the Pods a workload disturbance replaces: those of a namespace's controllers, or only those the
// selector matches.
type PodSet struct {
	Namespace string
	Selector  string
}

// Disturbance is one thing a cluster does on its own.
type Disturbance struct {
	Kind Kind
	// Pods are the Pods DeletePods deletes.
	Pods []PodSet
	// Node is where the node disturbances act; Component the static Pod RestartStaticPod restarts.
	Node      string
	Component string
	// Keys are the kernel parameters ReapplySysctl sets again from the node's boot-time configuration.
	Keys []string
}

func (d Disturbance) String() string {
	switch d.Kind {
	case DeletePods:
		var where []string
		for _, p := range d.Pods {
			w := "namespace " + p.Namespace
			if p.Selector != "" {
				w += " (" + p.Selector + ")"
			}
			where = append(where, w)
		}
		return "delete the workloads' Pods in " + strings.Join(where, ", ")
	case ReapplySysctl:
		return fmt.Sprintf("apply the boot-time sysctl settings of %s on %s", strings.Join(d.Keys, ", "), d.Node)
	case RestartStaticPod:
		return fmt.Sprintf("restart the static Pod %s on %s", d.Component, d.Node)
	case RestartContainerd:
		return "restart containerd on " + d.Node
	case RestartKubelet:
		return "restart the kubelet on " + d.Node
	}
	return string(d.Kind)
}

// systemNamespace holds the cluster's own workloads (the CNI, kube-proxy, CoreDNS): only the Pods a check
// selects there are replaced, not every Pod the cluster needs to run.
const systemNamespace = "kube-system"

// manifestDir is where kubeadm's static Pod manifests are, on every node.
const manifestDir = "/etc/kubernetes/manifests/"

// Choose picks the disturbances for the scenario instances graded together, from what their checks read
// (the workloads' Pods) and what their faults touch (nodes, their runtime, static Pods), in the order they run.
func Choose(insts ...*scenarios.Instance) []Disturbance {
	pods := map[PodSet]bool{}
	var nodes []Disturbance
	for _, inst := range insts {
		for _, c := range slices.Concat(inst.Checks, inst.Collateral) {
			for _, p := range podSets(c) {
				pods[p] = true
			}
		}
		for _, f := range inst.Faults {
			for _, d := range nodeDisturbances(f) {
				if i := slices.IndexFunc(nodes, d.sameNodeAction); i >= 0 {
					nodes[i].Keys = union(nodes[i].Keys, d.Keys)
				} else {
					nodes = append(nodes, d)
				}
			}
		}
	}
	var out []Disturbance
	if sets := podSetList(pods); len(sets) > 0 {
		out = append(out, Disturbance{Kind: DeletePods, Pods: sets})
	}
	sort.Slice(nodes, func(i, j int) bool {
		a, b := nodes[i], nodes[j]
		if a.Kind != b.Kind {
			return slices.Index(order, a.Kind) < slices.Index(order, b.Kind)
		}
		return a.Node+"/"+a.Component < b.Node+"/"+b.Component
	})
	return append(out, nodes...)
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, k := range b {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func (d Disturbance) sameNodeAction(o Disturbance) bool {
	return d.Kind == o.Kind && d.Node == o.Node && d.Component == o.Component
}

// podSets are the Pods a check reads, directly or through the object it names; a whole namespace when the
// check reads it through an object (a Service's endpoints, a Deployment's field).
func podSets(c scenarios.Check) []PodSet {
	sel := func(s scenarios.PodSelector) []PodSet {
		if s.Selector == "" && s.Name != "" {
			// A Pod named in full is one the learner or the task made, with no controller to replace it.
			return nil
		}
		return []PodSet{{Namespace: s.Namespace, Selector: s.Selector}}
	}
	ns := func(n string) []PodSet {
		if n == "" || n == systemNamespace {
			return nil
		}
		return []PodSet{{Namespace: n}}
	}
	switch {
	case c.PodsReady != nil:
		return sel(c.PodsReady.PodSelector)
	case c.PodState != nil:
		return sel(c.PodState.PodSelector)
	case c.Exec != nil:
		return sel(c.Exec.PodSelector)
	case c.Logs != nil:
		return sel(c.Logs.PodSelector)
	case c.Endpoints != nil:
		return ns(c.Endpoints.Namespace)
	case c.HTTP != nil:
		return ns(c.HTTP.Namespace)
	case c.Field != nil:
		return ns(c.Field.Object.Namespace)
	case c.Container != nil:
		return ns(c.Container.Object.Namespace)
	case c.Tolerates != nil:
		return ns(c.Tolerates.Object.Namespace)
	}
	return nil
}

// podSetList merges the sets: a whole namespace covers every selector in it; sorted.
func podSetList(sets map[PodSet]bool) []PodSet {
	var out []PodSet
	for p := range sets {
		if p.Namespace == "" || (p.Selector != "" && sets[PodSet{Namespace: p.Namespace}]) {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Selector < out[j].Selector
	})
	return out
}

// nodeDisturbances are what a fault on a node calls for: the kubelet restarted on every node a fault touched
// (a flag or file the kubelet reads at its start, a unit started by hand), containerd where the fault was
// about it, the static Pod whose manifest it changed, and the boot-time sysctl settings of the kernel
// parameters it set (a value set with sysctl -w alone is gone at the next boot).
func nodeDisturbances(f scenarios.Fault) []Disturbance {
	var nodeName, unit, file, component string
	var keys []string
	switch {
	case f.NodeFile != nil:
		nodeName, file = f.NodeFile.Node, f.NodeFile.Path
		if f.NodeFile.Write != nil && (strings.HasPrefix(file, sysctlDir) || file == sysctlConf) {
			keys = sysctlKeys(*f.NodeFile.Write)
		}
	case f.NodeService != nil:
		nodeName, unit = f.NodeService.Node, f.NodeService.Unit
	case f.Custom != nil:
		nodeName, component = f.Custom.Args["node"], f.Custom.Args["component"]
		if f.Custom.Func == "sysctl" && f.Custom.Args["key"] != "" {
			keys = []string{f.Custom.Args["key"]}
		}
	}
	if nodeName == "" {
		return nil
	}
	out := []Disturbance{{Kind: RestartKubelet, Node: nodeName}}
	if unit == "containerd" || strings.HasPrefix(file, "/etc/containerd/") {
		out = append(out, Disturbance{Kind: RestartContainerd, Node: nodeName})
	}
	if strings.HasPrefix(file, manifestDir) && strings.HasSuffix(file, ".yaml") {
		component = strings.TrimSuffix(path.Base(file), ".yaml")
	}
	if component != "" {
		out = append(out, Disturbance{Kind: RestartStaticPod, Node: nodeName, Component: component})
	}
	if len(keys) > 0 {
		out = append(out, Disturbance{Kind: ReapplySysctl, Node: nodeName, Keys: keys})
	}
	return out
}

// Where systemd-sysctl reads the settings it applies at boot, besides /usr/lib and /run.
const (
	sysctlDir  = "/etc/sysctl.d/"
	sysctlConf = "/etc/sysctl.conf"
)

// sysctlKeys are the kernel parameters a sysctl.d file sets ("key = value" lines; a leading "-" only says
// an unknown key is no error), sorted.
func sysctlKeys(content string) []string {
	var keys []string
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		key, _, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key = strings.TrimPrefix(strings.TrimSpace(key), "-")
		if key != "" && !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys
}
