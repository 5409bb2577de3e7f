// Package injector breaks a lab cluster on purpose and puts it back. Before a fault changes anything it records
// the prior state of what it touches in a ledger (API objects, node taints and labels, files and services on
// nodes), persisted after every entry, so Revert restores exactly that, even from another process after an
// interrupted start.
package injector

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	corev1 "k8s.io/api/core/v1"

	"github.com/cka-lab/lab/internal/state"
)

// Entry is the prior state of one thing a scenario changed; exactly one field is set.
type Entry struct {
	Object *ObjectPrior `json:"object,omitempty"`
	Node   *NodePrior   `json:"node,omitempty"`
	File   *FilePrior   `json:"file,omitempty"`
	Unit   *UnitPrior   `json:"unit,omitempty"`
	// StaticPod is a control-plane component whose manifest a fault changed (the file has its own entry).
	StaticPod *StaticPodPrior `json:"staticPod,omitempty"`
	Sysctl    *SysctlPrior    `json:"sysctl,omitempty"`
	// Joined is a node that was a member of the cluster before a fault reset it with kubeadm.
	Joined *JoinedPrior `json:"joined,omitempty"`
	// EtcdData is etcd's data directory on a node where a scenario offered a snapshot to restore.
	EtcdData *EtcdDataPrior `json:"etcdData,omitempty"`
}

// ObjectPrior is an API object as it was; Prior is null when it did not exist.
type ObjectPrior struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Namespace  string          `json:"namespace,omitempty"`
	Name       string          `json:"name"`
	Prior      json.RawMessage `json:"prior"`
}

// NodePrior is what lab may change on a Node object.
type NodePrior struct {
	Name          string            `json:"name"`
	Labels        map[string]string `json:"labels"`
	Taints        []corev1.Taint    `json:"taints"`
	Unschedulable bool              `json:"unschedulable"`
}

// FilePrior is a file inside a node container; the original is kept on the node at Backup, because binaries
// are too big for the ledger.
type FilePrior struct {
	Node    string `json:"node"`
	Path    string `json:"path"`
	Existed bool   `json:"existed"`
	SHA256  string `json:"sha256,omitempty"`
	Backup  string `json:"backup,omitempty"`
	// CreatedDir is the outermost directory the fault created to write a new file: reset removes it with
	// whatever the learner added inside (a scenario's project tree, such as a Kustomize base and overlay).
	CreatedDir string `json:"createdDir,omitempty"`
}

// UnitPrior is a systemd unit inside a node container.
type UnitPrior struct {
	Node   string `json:"node"`
	Unit   string `json:"unit"`
	Active bool   `json:"active"`
	// Restart is set when the unit reads a file lab changed: a unit left running on the changed file (a
	// learner's wrong fix) must be restarted, not merely started, to read the restored one.
	Restart bool `json:"restart,omitempty"`
}

// SysctlPrior is a kernel parameter of a node container's network namespace as it was.
type SysctlPrior struct {
	Node  string `json:"node"`
	Key   string `json:"key"`
	Value string `json:"value"`
}

// JoinedPrior is a node that had joined the cluster with kind's join configuration.
type JoinedPrior struct {
	Node         string `json:"node"`
	ControlPlane string `json:"controlPlane"`
}

func (e Entry) key() string {
	switch {
	case e.Object != nil:
		return fmt.Sprintf("object/%s/%s/%s/%s", e.Object.APIVersion, e.Object.Kind, e.Object.Namespace, e.Object.Name)
	case e.Node != nil:
		return "node/" + e.Node.Name
	case e.File != nil:
		return "file/" + e.File.Node + e.File.Path
	case e.Unit != nil:
		return "unit/" + e.Unit.Node + "/" + e.Unit.Unit
	case e.StaticPod != nil:
		return "staticPod/" + e.StaticPod.Node + "/" + e.StaticPod.Component
	case e.Sysctl != nil:
		return "sysctl/" + e.Sysctl.Node + "/" + e.Sysctl.Key
	case e.Joined != nil:
		return "joined/" + e.Joined.Node
	case e.EtcdData != nil:
		return "etcdData/" + e.EtcdData.Node
	}
	return ""
}

func (e Entry) String() string { return e.key() }

// Ledger is the ordered record of prior states for the scenario in progress.
type Ledger struct {
	path    string
	Entries []Entry `json:"entries"`
}

// OpenLedger reads the ledger at path; a missing file is an empty ledger.
func OpenLedger(path string) (*Ledger, error) {
	l := &Ledger{path: path}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, err
	}
	if err := state.Decode(path, b, l); err != nil {
		return nil, err
	}
	return l, nil
}

// Has reports whether the ledger already holds the prior state of e's target: the first record wins, because
// it is the state before the scenario touched anything.
func (l *Ledger) Has(e Entry) bool { return l.find(e) != nil }

// find returns the recorded entry with e's target, nil when there is none.
func (l *Ledger) find(e Entry) *Entry {
	for i := range l.Entries {
		if l.Entries[i].key() == e.key() {
			return &l.Entries[i]
		}
	}
	return nil
}

// Record appends e and persists the ledger before the caller changes anything.
func (l *Ledger) Record(e Entry) error {
	if l.Has(e) {
		return nil
	}
	l.Entries = append(l.Entries, e)
	return l.save()
}

// Empty reports whether nothing is recorded.
func (l *Ledger) Empty() bool { return len(l.Entries) == 0 }

func (l *Ledger) save() error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return state.WriteFile(l.path, b)
}

// createdNamespaces are the namespaces that did not exist before the scenario.
func (l *Ledger) createdNamespaces() map[string]bool {
	out := map[string]bool{}
	for _, e := range l.Entries {
		if e.Object != nil && isNamespace(e.Object) && (len(e.Object.Prior) == 0 || string(e.Object.Prior) == "null") {
			out[e.Object.Name] = true
		}
	}
	return out
}

func isNamespace(o *ObjectPrior) bool { return o.Kind == "Namespace" && o.APIVersion == "v1" }

// pop removes the last entry once it has been reverted.
func (l *Ledger) pop() error {
	l.Entries = l.Entries[:len(l.Entries)-1]
	return l.save()
}
