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
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/node"
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
	{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}, "IngressClass", false, true},
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
	{schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, "CustomResourceDefinition", false, false},
	{schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}, "APIService", false, false},
}

// laterKinds were tracked after baselines were first recorded: a baseline that does not list its kinds was
// taken without them, and its cluster's objects of these kinds are no residue (deleting every APIService that
// an old baseline lacks would take the API server's own groups offline).
var laterKinds = map[string]bool{"CustomResourceDefinition": true, "APIService": true}

// covers says whether the baseline recorded objects of kind.
func (s *Snapshot) covers(kind string) bool {
	if len(s.Kinds) == 0 {
		return !laterKinds[kind]
	}
	return slices.Contains(s.Kinds, kind)
}

// extra says whether live object k is one the baseline does not have, of a kind it recorded.
func (s *Snapshot) extra(k string, o Object) bool {
	_, ok := s.Objects[k]
	return !ok && s.covers(o.Kind)
}

// extrasOnly kinds are compared for what was added only: the cluster deletes its own in time (approved
// CertificateSigningRequests are garbage-collected after an hour).
var extrasOnly = map[string]bool{"CertificateSigningRequest": true}

// Files on every node that node-level faults touch; their hashes are compared. Config files are hashed with
// the node's own address replaced: a node container that Docker restarts may get a new one, and kind writes it
// into the control plane's manifests and kubeconfig at boot, which is no change a scenario made.
const (
	nodeBinaries = `/opt/cni/bin/*`
	nodeConfigs  = `/etc/kubernetes/manifests/* /etc/cni/net.d/* /var/lib/kubelet/config.yaml /etc/kubernetes/kubelet.conf /etc/containerd/config.toml`
)

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
	ExtrasOnly bool            `json:"extrasOnly,omitempty"`
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
	Taken time.Time `json:"taken"`
	// Kinds are the kinds of object recorded (missing from baselines taken before it was).
	Kinds   []string          `json:"kinds,omitempty"`
	Objects map[string]Object `json:"objects"`
	Nodes   map[string]Node   `json:"nodes"`
	// Files maps "node:path" to its sha256; Units "node:unit" to its state.
	Files map[string]string `json:"files"`
	Units map[string]string `json:"units"`
}

// Take records the cluster as it is now. Lists and node reads run concurrently: a reset takes one snapshot
// per round, so its cost is a reset's floor.
func Take(ctx context.Context, c *kube.Clients, ns []nodes.Node) (*Snapshot, error) {
	s := &Snapshot{Taken: time.Now().UTC(), Objects: map[string]Object{}, Nodes: map[string]Node{}, Files: map[string]string{}, Units: map[string]string{}}
	for _, t := range tracked {
		s.Kinds = append(s.Kinds, t.kind)
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for _, t := range tracked {
		g.Go(func() error {
			list, err := c.Dynamic.Resource(t.gvr).List(gctx, metav1.ListOptions{})
			if err != nil {
				return fmt.Errorf("list %s: %w", t.gvr.Resource, err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, u := range list.Items {
				o := Object{APIVersion: t.gvr.GroupVersion().String(), Kind: t.kind, Namespace: u.GetNamespace(), Name: u.GetName(), ExtrasOnly: extrasOnly[t.kind]}
				if t.content {
					o.Hash, o.Content = digest(&u)
				}
				s.Objects[o.key()] = o
			}
			return nil
		})
	}
	g.Go(func() error {
		nl, err := c.Kube.CoreV1().Nodes().List(gctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, n := range nl.Items {
			s.Nodes[n.Name] = Node{Labels: n.Labels, Taints: n.Spec.Taints, Unschedulable: n.Spec.Unschedulable}
		}
		return nil
	})
	for _, n := range ns {
		g.Go(func() error {
			files, units, err := readNode(gctx, n)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			maps.Copy(s.Files, files)
			maps.Copy(s.Units, units)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return s, nil
}

// readNode hashes the node's files and reads its units' states in one command inside the node.
func readNode(ctx context.Context, n nodes.Node) (files, units map[string]string, err error) {
	script := "sha256sum " + nodeBinaries + ` 2>/dev/null
ip=$(ip -4 -o addr show dev eth0 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -n1 | sed 's/\./\\./g')
for f in ` + nodeConfigs + `; do
  [ -f "$f" ] || continue
  if [ -n "$ip" ]; then h=$(sed "s/$ip/NODE_IP/g" "$f" | sha256sum); else h=$(sha256sum < "$f"); fi
  echo "${h%% *}  $f"
done
for u in ` + strings.Join(nodeUnits, " ") + "; do echo unit $u $(systemctl is-active $u); done"
	out, err := node.Run(ctx, n, "sh", "-c", script)
	if err != nil {
		return nil, nil, err
	}
	files, units = map[string]string{}, map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "unit":
			units[n.String()+":"+f[1]] = f[2]
		case len(f) == 2:
			files[n.String()+":"+f[1]] = f[0]
		}
	}
	return files, units, nil
}

// Rehash recomputes the hash of every object kept whole with this version of lab's rules of what is volatile,
// so a baseline recorded by an older lab compares like one recorded now.
func (s *Snapshot) Rehash() {
	for k, o := range s.Objects {
		if len(o.Content) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(o.Content, &u.Object); err != nil {
			continue
		}
		o.Hash, o.Content = digest(u)
		s.Objects[k] = o
	}
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
	// The bootstrap signer keeps one signature per bootstrap token in cluster-info: tokens expire (kind's after
	// a day) and a node's join creates one, so the signatures follow the tokens, not a change of the cluster.
	if c.GetKind() == "ConfigMap" && c.GetNamespace() == "kube-public" && c.GetName() == "cluster-info" {
		data, _, _ := unstructured.NestedMap(c.Object, "data")
		for k := range data {
			if strings.HasPrefix(k, "jws-kubeconfig-") {
				unstructured.RemoveNestedField(c.Object, "data", k)
			}
		}
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
	for _, k := range slices.Sorted(maps.Keys(base.Objects)) {
		b := base.Objects[k]
		l, ok := live.Objects[k]
		switch {
		case !ok && (b.ExtrasOnly || extrasOnly[b.Kind]):
		case !ok:
			out = append(out, Residue{What: "missing", Target: k})
		case b.Hash != l.Hash:
			out = append(out, Residue{What: "changed", Target: k})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(live.Objects)) {
		if base.extra(k, live.Objects[k]) {
			out = append(out, Residue{What: "extra", Target: k})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(base.Nodes)) {
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
	for _, k := range slices.Sorted(maps.Keys(base.Files)) {
		if l, ok := live.Files[k]; !ok {
			out = append(out, Residue{What: "missing", Target: "file " + k})
		} else if l != base.Files[k] {
			out = append(out, Residue{What: "changed", Target: "file " + k})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(live.Files)) {
		if _, ok := base.Files[k]; !ok {
			out = append(out, Residue{What: "extra", Target: "file " + k})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(base.Units)) {
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
