// Package baseline records what a healthy lab cluster looks like (API objects lab or a learner may change,
// node labels and taints, the files and services on nodes that faults touch) and compares a live cluster with
// it, so `lab reset` can remove what a scenario or a learner left behind and prove nothing is left.
package baseline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/injector"
	"github.com/cka-lab/lab/kube"
)

// tracked are the kinds a scenario or a learner's fix may create or change outside a scenario's namespaces.
// Content says whether the object is kept whole (to restore it) or only by name.
var tracked = []struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	content    bool
}{
	{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "Namespace", false, false},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, "ClusterRole", false, true},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, "ClusterRoleBinding", false, true},
	{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}, "ValidatingWebhookConfiguration", false, true},
	{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}, "MutatingWebhookConfiguration", false, true},
	{schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}, "StorageClass", false, true},
	{schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}, "PriorityClass", false, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}, "PersistentVolume", false, false},
	{schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}, "CertificateSigningRequest", false, false},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment", true, true},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, "DaemonSet", true, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "services"}, "Service", true, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ConfigMap", true, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, "ServiceAccount", true, false},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, "Role", true, true},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, "RoleBinding", true, true},
	{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, "NetworkPolicy", true, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}, "ResourceQuota", true, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}, "LimitRange", true, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, "PersistentVolumeClaim", true, false},
}

// nodeFiles are the files on every node that node-level faults touch; their hashes are compared.
const nodeFiles = `/etc/kubernetes/manifests/* /etc/cni/net.d/* /opt/cni/bin/* /var/lib/kubelet/config.yaml /etc/kubernetes/kubelet.conf /etc/containerd/config.toml`

// nodeUnits are the services on every node whose state is compared.
var nodeUnits = []string{"kubelet", "containerd"}

// Object is one tracked object.
type Object struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Namespace  string          `json:"namespace,omitempty"`
	Name       string          `json:"name"`
	Hash       string          `json:"hash,omitempty"`
	Content    json.RawMessage `json:"content,omitempty"`
}

func (o Object) key() string { return o.Kind + " " + o.ref() }

func (o Object) ref() string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// Node is what lab compares on a Node object.
type Node struct {
	Labels        map[string]string `json:"labels"`
	Taints        []corev1.Taint    `json:"taints"`
	Unschedulable bool              `json:"unschedulable"`
}

func taintStrings(ts []corev1.Taint) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
	}
	sort.Strings(out)
	return out
}

// Snapshot is a cluster's baseline.
type Snapshot struct {
	Taken   time.Time         `json:"taken"`
	Objects map[string]Object `json:"objects"`
	Nodes   map[string]Node   `json:"nodes"`
	// Files maps "node:path" to its sha256; Units "node:unit" to its state.
	Files map[string]string `json:"files"`
	Units map[string]string `json:"units"`
}

// Take records the cluster as it is now.
func Take(ctx context.Context, c *kube.Clients, ns []nodes.Node) (*Snapshot, error) {
	s := &Snapshot{Taken: time.Now().UTC(), Objects: map[string]Object{}, Nodes: map[string]Node{}, Files: map[string]string{}, Units: map[string]string{}}
	namespaces := map[string]bool{}
	for _, t := range tracked {
		list, err := c.Dynamic.Resource(t.gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", t.gvr.Resource, err)
		}
		for _, u := range list.Items {
			if t.kind == "Namespace" {
				namespaces[u.GetName()] = true
			}
			o := Object{APIVersion: t.gvr.GroupVersion().String(), Kind: t.kind, Namespace: u.GetNamespace(), Name: u.GetName()}
			if t.content {
				o.Hash, o.Content = digest(&u)
			}
			s.Objects[o.key()] = o
		}
	}
	nl, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, n := range nl.Items {
		s.Nodes[n.Name] = Node{Labels: n.Labels, Taints: n.Spec.Taints, Unschedulable: n.Spec.Unschedulable}
	}
	for _, n := range ns {
		if err := s.readNode(ctx, n); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Snapshot) readNode(ctx context.Context, n nodes.Node) error {
	out, err := injector.NodeRun(ctx, n, "sh", "-c", "sha256sum "+nodeFiles+" 2>/dev/null; true")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			s.Files[n.String()+":"+f[1]] = f[0]
		}
	}
	for _, u := range nodeUnits {
		state, _ := injector.NodeRun(ctx, n, "systemctl", "is-active", u)
		s.Units[n.String()+":"+u] = strings.TrimSpace(state)
	}
	return nil
}

// volatile fields change without anyone changing the object (controllers, defaulting); they are not compared.
var volatile = [][]string{
	{"metadata", "resourceVersion"}, {"metadata", "uid"}, {"metadata", "creationTimestamp"}, {"metadata", "managedFields"},
	{"metadata", "generation"}, {"metadata", "annotations", "deployment.kubernetes.io/revision"},
	{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}, {"status"},
	{"metadata", "annotations", "deprecated.daemonset.template.generation"},
}

func digest(u *unstructured.Unstructured) (string, json.RawMessage) {
	c := u.DeepCopy()
	for _, f := range volatile {
		unstructured.RemoveNestedField(c.Object, f...)
	}
	b, _ := json.Marshal(c.Object)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8]), b
}

// Residue is one difference between the live cluster and its baseline.
type Residue struct {
	What   string `json:"what"`   // "extra", "missing", "changed"
	Target string `json:"target"` // e.g. "ClusterRoleBinding ci-admin", "node lab-worker taints"
	Detail string `json:"detail,omitempty"`
}

func (r Residue) String() string {
	if r.Detail == "" {
		return r.What + " " + r.Target
	}
	return r.What + " " + r.Target + ": " + r.Detail
}

// Diff lists what differs between base and live; objects of kinds kept by name only are compared by name.
func Diff(base, live *Snapshot) []Residue {
	var out []Residue
	for _, k := range sortedKeys(base.Objects) {
		b := base.Objects[k]
		l, ok := live.Objects[k]
		switch {
		case !ok && b.Kind == "CertificateSigningRequest":
			// The controller-manager deletes issued CSRs (the kubelets' own) an hour after they were made.
		case !ok:
			out = append(out, Residue{What: "missing", Target: k})
		case b.Hash != l.Hash:
			out = append(out, Residue{What: "changed", Target: k})
		}
	}
	for _, k := range sortedKeys(live.Objects) {
		if _, ok := base.Objects[k]; !ok {
			out = append(out, Residue{What: "extra", Target: k})
		}
	}
	for _, name := range sortedKeys(base.Nodes) {
		b, l := base.Nodes[name], live.Nodes[name]
		if !equalMaps(b.Labels, l.Labels) {
			out = append(out, Residue{What: "changed", Target: "node " + name + " labels"})
		}
		if bt, lt := taintStrings(b.Taints), taintStrings(l.Taints); !slices.Equal(bt, lt) {
			out = append(out, Residue{What: "changed", Target: "node " + name + " taints", Detail: fmt.Sprintf("%v, baseline %v", lt, bt)})
		}
		if b.Unschedulable != l.Unschedulable {
			out = append(out, Residue{What: "changed", Target: "node " + name + " schedulability"})
		}
	}
	for _, k := range sortedKeys(base.Files) {
		if l, ok := live.Files[k]; !ok {
			out = append(out, Residue{What: "missing", Target: "file " + k})
		} else if l != base.Files[k] {
			out = append(out, Residue{What: "changed", Target: "file " + k})
		}
	}
	for _, k := range sortedKeys(live.Files) {
		if _, ok := base.Files[k]; !ok {
			out = append(out, Residue{What: "extra", Target: "file " + k})
		}
	}
	for _, k := range sortedKeys(base.Units) {
		if live.Units[k] != base.Units[k] {
			out = append(out, Residue{What: "changed", Target: "unit " + k, Detail: live.Units[k] + ", baseline " + base.Units[k]})
		}
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
