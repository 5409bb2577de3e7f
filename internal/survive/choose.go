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
	fp := c.Touches()
	var out []PodSet
	for _, p := range fp.Pods {
		out = append(out, sel(p.PodSelector)...)
	}
	for _, svc := range fp.Services {
		out = append(out, ns(svc.Namespace)...)
	}
	for _, o := range fp.Objects {
		if o.Workload {
			out = append(out, ns(o.Namespace)...)
		}
	}
	return out
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
	var out []Disturbance
	for _, n := range f.Touches().Nodes {
		if !n.Inside || n.Name == "" {
			continue
		}
		out = append(out, Disturbance{Kind: RestartKubelet, Node: n.Name})
		if slices.Contains(n.Units, "containerd") || slices.ContainsFunc(n.Files, func(f string) bool { return strings.HasPrefix(f, "/etc/containerd/") }) {
			out = append(out, Disturbance{Kind: RestartContainerd, Node: n.Name})
		}
		component := n.Component
		for _, file := range n.Files {
			if strings.HasPrefix(file, scenarios.ManifestDir) && strings.HasSuffix(file, ".yaml") {
				component = strings.TrimSuffix(path.Base(file), ".yaml")
			}
		}
		if component != "" {
			out = append(out, Disturbance{Kind: RestartStaticPod, Node: n.Name, Component: component})
		}
		if len(n.Sysctl) > 0 {
			out = append(out, Disturbance{Kind: ReapplySysctl, Node: n.Name, Keys: n.Sysctl})
		}
	}
	return out
}
