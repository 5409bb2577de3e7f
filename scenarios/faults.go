package scenarios

import (
	"slices"
	"sort"
	"strings"

	"github.com/cka-lab/lab/internal/manifest"
)

// Fault is one change that breaks the cluster; exactly one kind is set. The injector records the prior state
// of everything a fault touches before changing it.
//
// Each pointer field is a fault kind, named by its YAML key: its type is a Kind (kinds.go says what adding
// one takes). Its injector records a ledger entry before it changes anything, which Revert must know how to
// undo.
type Fault struct {
	Apply       *ApplyFault       `yaml:"apply"`
	Patch       *PatchFault       `yaml:"patch"`
	Delete      *DeleteFault      `yaml:"delete"`
	Scale       *ScaleFault       `yaml:"scale"`
	Taint       *TaintFault       `yaml:"taint"`
	Label       *LabelFault       `yaml:"label"`
	Cordon      *NodeFault        `yaml:"cordon"`
	NodeFile    *NodeFileFault    `yaml:"nodeFile"`
	NodeService *NodeServiceFault `yaml:"nodeService"`
	Webhook     *WebhookFault     `yaml:"webhook"`
	Custom      *CustomFault      `yaml:"custom"`
}

// ApplyFault server-side applies a manifest (objects that are wrong, or that a fix must not remove).
type ApplyFault struct {
	Manifest string `yaml:"manifest"`
	// Wait, when set, waits until the applied workloads' Pods exist (so a symptom has a Pod to show).
	Wait bool `yaml:"wait"`
	// Bound, when set, waits until the applied claims are Bound, so a Pod applied after them is scheduled
	// against their volumes instead of being refused for an unbound claim.
	Bound bool `yaml:"bound"`
	// Ready, when set, waits until the applied workloads have every replica Ready: for a fault that a new Pod
	// would undo (a CNI plugin turns IP forwarding back on when it sets up a Pod's network), injected after it.
	Ready bool `yaml:"ready"`
}

// Touches is the objects its manifest states, each created by it.
func (f *ApplyFault) Touches() Footprint {
	objs, err := manifest.Decode([]byte(f.Manifest))
	if err != nil {
		return Footprint{Err: err}
	}
	fp := Footprint{}
	for _, o := range objs {
		ref := ObjectRef{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
		fp.Objects = append(fp.Objects, ObjectUse{ObjectRef: ref, Exists: true, Created: true})
	}
	return fp
}
func (f *ApplyFault) Validate() []Problem { return manifestProblems(f.Manifest) }

// PatchFault patches a live object (type merge, strategic or json).
type PatchFault struct {
	Object ObjectRef `yaml:"object"`
	Type   string    `yaml:"type"`
	Patch  string    `yaml:"patch"`
}

// Touches is the object it patches, which exists once it is in: the fault fails otherwise.
func (f *PatchFault) Touches() Footprint {
	return Footprint{Objects: []ObjectUse{{ObjectRef: f.Object, Exists: true}}}
}

func (f *PatchFault) Validate() []Problem {
	if !slices.Contains([]string{"merge", "strategic", "json"}, f.Type) {
		return []Problem{problem("type", "must be merge, strategic or json, got %q", f.Type)}
	}
	return nil
}

// ScaleFault sets a workload's replicas.
type ScaleFault struct {
	Object   ObjectRef `yaml:"object"`
	Replicas int32     `yaml:"replicas"`
}

func (f *ScaleFault) Touches() Footprint {
	return Footprint{Objects: []ObjectUse{{ObjectRef: f.Object}}}
}
func (f *ScaleFault) Validate() []Problem { return nil }

// TaintFault adds a taint to a node.
type TaintFault struct {
	Node   string `yaml:"node"`
	Key    string `yaml:"key"`
	Value  string `yaml:"value"`
	Effect string `yaml:"effect"`
}

func (f *TaintFault) Touches() Footprint  { return nodeObject(f.Node) }
func (f *TaintFault) Validate() []Problem { return nil }

// LabelFault sets and removes node labels.
type LabelFault struct {
	Node   string            `yaml:"node"`
	Set    map[string]string `yaml:"set"`
	Remove []string          `yaml:"remove"`
}

func (f *LabelFault) Touches() Footprint  { return nodeObject(f.Node) }
func (f *LabelFault) Validate() []Problem { return nil }

// NodeFault names a node.
type NodeFault struct {
	Node string `yaml:"node"`
}

// Touches is the node a cordon marks unschedulable.
func (f *NodeFault) Touches() Footprint  { return nodeObject(f.Node) }
func (f *NodeFault) Validate() []Problem { return nil }

// nodeObject is the footprint of a fault on a Node object: a change every namespace's Pods see.
func nodeObject(node string) Footprint {
	return Footprint{Nodes: []NodeUse{{Name: node, Object: true}}, ClusterWide: true}
}

// NodeFileFault changes a file inside a node container, as a learner would after `ssh node`; exactly one
// operation is set.
type NodeFileFault struct {
	Node    string       `yaml:"node"`
	Path    string       `yaml:"path"`
	Replace *Replacement `yaml:"replace"`
	Write   *string      `yaml:"write"`
	Remove  bool         `yaml:"remove"`
	MoveTo  string       `yaml:"moveTo"`
	Chmod   string       `yaml:"chmod"`
	// WholeDir records the file's whole directory instead of the file, so reset also removes the files a fix
	// added there under names of the learner's choosing (a drop-in beside a profile in /etc/sysctl.d).
	WholeDir bool `yaml:"wholeDir"`
}

// Touches is the file on the node, and the kernel parameters it sets when it writes a sysctl configuration
// the node applies at boot.
func (f *NodeFileFault) Touches() Footprint {
	n := NodeUse{Name: f.Node, Inside: true, Files: []string{f.Path}}
	if f.Write != nil && (strings.HasPrefix(f.Path, sysctlDir) || f.Path == sysctlConf) {
		n.Sysctl = sysctlKeys(*f.Write)
	}
	return Footprint{Nodes: []NodeUse{n}, ClusterWide: true}
}

func (f *NodeFileFault) Validate() []Problem {
	ops := 0
	for _, set := range []bool{f.Replace != nil, f.Write != nil, f.Remove, f.MoveTo != "", f.Chmod != ""} {
		if set {
			ops++
		}
	}
	if ops != 1 || f.Node == "" || f.Path == "" {
		return []Problem{problem("", "needs node, path and exactly one of replace, write, remove, moveTo, chmod")}
	}
	return nil
}

// Replacement replaces every Old with New; Old must occur.
type Replacement struct {
	Old string `yaml:"old"`
	New string `yaml:"new"`
}

// NodeServiceFault stops a systemd unit inside a node container.
type NodeServiceFault struct {
	Node string `yaml:"node"`
	Unit string `yaml:"unit"`
}

func (f *NodeServiceFault) Touches() Footprint {
	return Footprint{Nodes: []NodeUse{{Name: f.Node, Inside: true, Units: []string{f.Unit}}}, ClusterWide: true}
}
func (f *NodeServiceFault) Validate() []Problem { return nil }

// WebhookFault deploys lab's own admission webhook server into the cluster (validating, or mutating).
type WebhookFault struct {
	Name              string            `yaml:"name"`
	Namespace         string            `yaml:"namespace"`
	Policy            string            `yaml:"policy"`
	FailurePolicy     string            `yaml:"failurePolicy"`
	NamespaceSelector map[string]string `yaml:"namespaceSelector"`
	Replicas          *int32            `yaml:"replicas"`
	// Resources the webhook reviews on create and update, as resource[.group] ("pods", "deployments.apps");
	// empty means Pods and every workload that has a Pod template (Pod creates for a mutating webhook).
	Resources []string `yaml:"resources"`
	// Mutating registers a mutating policy (inject-sidecar:<image>) in a MutatingWebhookConfiguration.
	Mutating bool `yaml:"mutating"`
}

// Touches is the objects lab deploys the webhook as; its configuration reaches every request it reviews.
func (f *WebhookFault) Touches() Footprint {
	config := ObjectRef{Kind: "ValidatingWebhookConfiguration", Name: f.Name}
	if f.Mutating {
		config.Kind = "MutatingWebhookConfiguration"
	}
	fp := Footprint{ClusterWide: true}
	for _, r := range []ObjectRef{{Kind: "Deployment", Namespace: f.Namespace, Name: f.Name}, {Kind: "Service", Namespace: f.Namespace, Name: f.Name},
		{Kind: "Secret", Namespace: f.Namespace, Name: f.Name + "-tls"}, {APIVersion: "v1", Kind: "Namespace", Name: f.Namespace}, config} {
		fp.Objects = append(fp.Objects, ObjectUse{ObjectRef: r, Exists: true, Created: true})
	}
	return fp
}

func (f *WebhookFault) Validate() []Problem {
	if f.FailurePolicy != "" && f.FailurePolicy != "Fail" && f.FailurePolicy != "Ignore" {
		return []Problem{problem("failurePolicy", "must be Fail or Ignore")}
	}
	return nil
}

// DeleteFault deletes a live object.
type DeleteFault struct {
	ObjectRef `yaml:",inline"`
}

func (f *DeleteFault) Touches() Footprint {
	return Footprint{Objects: []ObjectUse{{ObjectRef: f.ObjectRef}}}
}
func (f *DeleteFault) Validate() []Problem { return nil }

// CustomFault is a Go fault registered in the injector.
type CustomFault struct {
	Custom `yaml:",inline"`
}

// Touches is what its arguments name, and the objects it is known to create; lab cannot see the rest.
func (f *CustomFault) Touches() Footprint {
	fp := Footprint{System: systemCustomFaults[f.Func], Opaque: true}
	if ns := f.Args["namespace"]; ns != "" {
		fp.Namespaces = []string{ns}
	}
	if creates := customCreates[f.Func]; creates != nil {
		for _, r := range creates(f.Args) {
			fp.Objects = append(fp.Objects, ObjectUse{ObjectRef: r, Exists: true, Created: true})
		}
	}
	if node := f.Args["node"]; node != "" {
		n := NodeUse{Name: node, Inside: true, Component: f.Args["component"]}
		if f.Func == "sysctl" && f.Args["key"] != "" {
			n.Sysctl = []string{f.Args["key"]}
		}
		fp.Nodes = []NodeUse{n}
	}
	return fp
}
func (f *CustomFault) Validate() []Problem { return nil }

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
