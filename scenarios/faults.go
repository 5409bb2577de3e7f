package scenarios

// Fault is one change that breaks the cluster; exactly one kind is set. The injector records the prior state
// of everything a fault touches before changing it.
//
// Adding a fault kind: a pointer field here; its name in Fault.Kind; its case in injector.Inject (both
// pinned by injector's TestEveryFaultKindIsInjected), recording a ledger entry before it changes anything,
// which Revert must know how to undo; createdObjects in lint.go when it creates objects checks may name; its
// required fields in validator.faults; a line in scenarios/README.md.
type Fault struct {
	Apply       *ApplyFault       `yaml:"apply"`
	Patch       *PatchFault       `yaml:"patch"`
	Delete      *ObjectRef        `yaml:"delete"`
	Scale       *ScaleFault       `yaml:"scale"`
	Taint       *TaintFault       `yaml:"taint"`
	Label       *LabelFault       `yaml:"label"`
	Cordon      *NodeFault        `yaml:"cordon"`
	NodeFile    *NodeFileFault    `yaml:"nodeFile"`
	NodeService *NodeServiceFault `yaml:"nodeService"`
	Webhook     *WebhookFault     `yaml:"webhook"`
	Custom      *Custom           `yaml:"custom"`
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

// PatchFault patches a live object (type merge, strategic or json).
type PatchFault struct {
	Object ObjectRef `yaml:"object"`
	Type   string    `yaml:"type"`
	Patch  string    `yaml:"patch"`
}

// ScaleFault sets a workload's replicas.
type ScaleFault struct {
	Object   ObjectRef `yaml:"object"`
	Replicas int32     `yaml:"replicas"`
}

// TaintFault adds a taint to a node.
type TaintFault struct {
	Node   string `yaml:"node"`
	Key    string `yaml:"key"`
	Value  string `yaml:"value"`
	Effect string `yaml:"effect"`
}

// LabelFault sets and removes node labels.
type LabelFault struct {
	Node   string            `yaml:"node"`
	Set    map[string]string `yaml:"set"`
	Remove []string          `yaml:"remove"`
}

// NodeFault names a node.
type NodeFault struct {
	Node string `yaml:"node"`
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

// Kind returns the name of the fault kind that is set and how many are set.
func (f *Fault) Kind() (string, int) {
	kinds := []struct {
		name string
		set  bool
	}{
		{"apply", f.Apply != nil}, {"patch", f.Patch != nil}, {"delete", f.Delete != nil}, {"scale", f.Scale != nil},
		{"taint", f.Taint != nil}, {"label", f.Label != nil}, {"cordon", f.Cordon != nil},
		{"nodeFile", f.NodeFile != nil}, {"nodeService", f.NodeService != nil}, {"webhook", f.Webhook != nil},
		{"custom", f.Custom != nil},
	}
	name, n := "", 0
	for _, k := range kinds {
		if k.set {
			name, n = k.name, n+1
		}
	}
	return name, n
}
