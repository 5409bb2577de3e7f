package scenarios

import (
	"fmt"
	"slices"
	"strings"
)

// Scope is what a task involves, as its checks, faults, builds and mayChange list say: what a learner may
// change, create or delete while doing it. Grading fails every other net change since the task was shown
// (the unchanged check), so a shortcut fails by rule, whether or not its author foresaw it.
//
// Objects are named the way the baseline names them: "Kind name" cluster-wide, "Kind namespace/name" in a
// namespace. The grader resolves the rest against the cluster: the controllers whose Pods the task reads or
// reaches through its Services, what their Pod templates refer to (ConfigMaps, Secrets, claims, the
// ServiceAccount), what selects their Pods (NetworkPolicies, PodDisruptionBudgets, autoscalers), and the RBAC
// bindings that name the task's subjects with the roles they bind.
type Scope struct {
	// Objects may be changed, deleted or recreated.
	Objects []string `json:"objects,omitempty"`
	// Pods are the Pods the task reads; Services those it reaches Pods through.
	Pods     []PodSelector `json:"pods,omitempty"`
	Services []ServiceRef  `json:"services,omitempty"`
	// Subjects are the users and ServiceAccounts the task grants permissions (one it only keeps refused
	// involves no RBAC write).
	Subjects []SubjectUse `json:"subjects,omitempty"`
	// Namespaces are where the task reads or works: new objects may be made there (and the namespace itself
	// created). Namespace objects themselves (their labels) are involved only when named in Objects.
	Namespaces []string `json:"namespaces,omitempty"`
	// Kinds are the cluster-wide kinds of which the task involves an object: new ones may be made.
	Kinds []string `json:"kinds,omitempty"`
	// Nodes are the Node objects (labels, taints, cordon) the task involves; Inside the nodes whose files and
	// services it involves. "*" is every node.
	Nodes  []string `json:"nodes,omitempty"`
	Inside []string `json:"inside,omitempty"`
	// Open are namespaces where a check judges whatever it finds at run time (a Helm release, a Kustomize
	// directory, an operator's objects): any object there may be part of the fix.
	Open []string `json:"open,omitempty"`
	// System says the task involves kube-system's own objects.
	System bool `json:"system,omitempty"`
	// MayChange is the scenario's own list of what else a correct fix may change.
	MayChange []MayChange `json:"mayChange,omitempty"`
}

// MayChange names what a correct fix may change although no check or fault names it, and why: a scenario
// file's way to widen its Scope. Name "*" is every object of the kind in the namespace; kind Node names a
// Node object.
type MayChange struct {
	Kind      string `yaml:"kind" json:"kind"`
	Namespace string `yaml:"namespace" json:"namespace,omitempty"`
	Name      string `yaml:"name" json:"name"`
	Why       string `yaml:"why" json:"why"`
}

// Allows says whether m names the object.
func (m MayChange) Allows(kind, namespace, name string) bool {
	return m.Kind == kind && m.Namespace == namespace && (m.Name == "*" || m.Name == name)
}

func (m MayChange) validate() []string {
	var out []string
	if m.Kind == "" || m.Name == "" {
		out = append(out, "needs kind and name (name \"*\" for every object of the kind in the namespace)")
	}
	if strings.TrimSpace(m.Why) == "" {
		out = append(out, "needs why: the correct fix that changes it, for the reader of `lab scenario lint`")
	}
	return out
}

// ObjectKey names an object the way Scope and the baseline do.
func ObjectKey(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// Scope derives what the task involves from its checks (symptom, task and collateral alike: what a check
// reads is what a fix may touch), its faults, its builds and its mayChange list.
func (s *Scenario) Scope() Scope {
	var sc Scope
	add := func(fp Footprint, fault bool) {
		sc.Namespaces = append(sc.Namespaces, fp.Namespaces...)
		sc.Namespaces = append(sc.Namespaces, fp.Watches...)
		if !fault {
			sc.Open = append(sc.Open, fp.Watches...)
		}
		for _, o := range fp.Objects {
			if o.Kind != "" && o.Name != "" {
				sc.addObject(o.Kind, o.Namespace, o.Name)
			}
		}
		for _, p := range fp.Pods {
			sc.Pods = append(sc.Pods, p.PodSelector)
			if p.Name != "" {
				sc.addObject("Pod", p.Namespace, p.Name)
			}
		}
		sc.Services = append(sc.Services, fp.Services...)
		for _, sv := range fp.Services {
			sc.addObject("Service", sv.Namespace, sv.Name)
		}
		for _, su := range fp.Subjects {
			if !su.Grants {
				continue
			}
			sc.Subjects = append(sc.Subjects, su)
			if su.Namespace != "" {
				sc.Namespaces = append(sc.Namespaces, su.Namespace)
			}
			if ns, _, ok := strings.Cut(strings.TrimPrefix(su.Name, "system:serviceaccount:"), ":"); ok && strings.HasPrefix(su.Name, "system:serviceaccount:") {
				sc.Namespaces = append(sc.Namespaces, ns)
			}
			sc.Kinds = append(sc.Kinds, "ClusterRole", "ClusterRoleBinding")
		}
		for _, n := range fp.Nodes {
			name := n.Name
			if name == "" {
				name = "*"
			}
			// A check reads the Node object (its taints, readiness), so a fix may change it; a fault may
			// change it only where it says so.
			if n.Object || !fault {
				sc.Nodes = append(sc.Nodes, name)
			}
			if n.Inside {
				sc.Inside = append(sc.Inside, name)
			}
		}
		sc.System = sc.System || fp.System
	}
	for _, list := range [][]Check{s.Symptom, s.Checks, s.Collateral} {
		for i := range list {
			add(list[i].Touches(), false)
		}
	}
	for i := range s.Faults {
		add(s.Faults[i].Touches(), true)
	}
	for _, b := range s.Builds {
		sc.addObject(b.Kind, b.Namespace, b.Name)
	}
	for _, f := range s.BuildFiles {
		sc.Inside = append(sc.Inside, f.Node)
	}
	sc.MayChange = s.MayChange
	return sc.normalize()
}

func (sc *Scope) addObject(kind, namespace, name string) {
	if kind == "Node" {
		sc.Nodes = append(sc.Nodes, name)
		return
	}
	sc.Objects = append(sc.Objects, ObjectKey(kind, namespace, name))
	if namespace != "" {
		sc.Namespaces = append(sc.Namespaces, namespace)
	} else {
		sc.Kinds = append(sc.Kinds, kind)
	}
}

// AddChanged adds what the faults were seen to change at start (an object, or a Node object by name with
// kind "Node"): undoing a fault is always part of the task.
func (sc *Scope) AddChanged(kind, namespace, name string) { sc.addObject(kind, namespace, name) }

// AddInside adds a node whose files or services the faults were seen to change.
func (sc *Scope) AddInside(node string) { sc.Inside = append(sc.Inside, node) }

// normalize sorts and deduplicates every list, so a Scope compares and prints the same every time.
func (sc Scope) normalize() Scope {
	for _, l := range []*[]string{&sc.Objects, &sc.Namespaces, &sc.Kinds, &sc.Nodes, &sc.Inside, &sc.Open} {
		*l = slices.Compact(slices.Sorted(slices.Values(slices.DeleteFunc(*l, func(s string) bool { return s == "" }))))
	}
	return sc
}

// Normalized returns sc sorted and deduplicated.
func (sc Scope) Normalized() Scope { return sc.normalize() }

// Has says whether the task involves the object by name (or by the scenario's mayChange list, or as one of
// an open namespace).
func (sc Scope) Has(kind, namespace, name string) bool {
	if _, ok := slices.BinarySearch(sc.Objects, ObjectKey(kind, namespace, name)); ok {
		return true
	}
	if kind != "Namespace" && sc.IsOpen(namespace) {
		return true
	}
	if sc.System && namespace == "kube-system" {
		return true
	}
	for _, m := range sc.MayChange {
		if m.Allows(kind, namespace, name) {
			return true
		}
	}
	return false
}

// IsOpen says whether a check judges whatever it finds in the namespace.
func (sc Scope) IsOpen(ns string) bool {
	return ns != "" && slices.Contains(sc.Open, ns)
}

// HasNamespace says whether the task reads or works in the namespace.
func (sc Scope) HasNamespace(ns string) bool {
	_, ok := slices.BinarySearch(sc.Namespaces, ns)
	return ok || sc.System && ns == "kube-system"
}

// HasKind says whether the task involves an object of the cluster-wide kind.
func (sc Scope) HasKind(kind string) bool {
	_, ok := slices.BinarySearch(sc.Kinds, kind)
	return ok
}

// HasNode says whether the task involves the Node object; HasInside its files and services.
func (sc Scope) HasNode(name string) bool {
	return hasNode(sc.Nodes, name) || slices.ContainsFunc(sc.MayChange, func(m MayChange) bool { return m.Allows("Node", "", name) })
}
func (sc Scope) HasInside(name string) bool { return hasNode(sc.Inside, name) }

func hasNode(list []string, name string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, name)
}

// UnchangedCheck passes while nothing the task does not involve differs from the snapshot lab took when the
// task was shown: lab adds it to every task it can take a snapshot for, never a scenario file.
type UnchangedCheck struct {
	// Since is the snapshot file; Scope what the task involves, with what its faults were seen to change.
	Since string `yaml:"since" json:"since"`
	Scope Scope  `yaml:"-" json:"scope"`
}

func (c *UnchangedCheck) Touches() Footprint { return Footprint{} }

// Validate refuses it in a scenario file: lab adds it itself, and a scenario widens what its task may change
// with mayChange.
func (c *UnchangedCheck) Validate() []Problem {
	return []Problem{problem("", "lab adds this check itself at start; list what else a fix may change under mayChange:")}
}

// UnchangedName is the unchanged check's name in reports.
const UnchangedName = "nothing the task does not involve has changed"

// String is how `lab scenario lint` lists it: the object, then why.
func (m MayChange) String() string {
	return fmt.Sprintf("%s (%s)", ObjectKey(m.Kind, m.Namespace, m.Name), strings.TrimSpace(m.Why))
}
