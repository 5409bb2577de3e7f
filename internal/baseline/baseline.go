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
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/node"
)

// tracked are the kinds a scenario or a learner's fix may create or change: the ones that steer Pods, traffic
// or access, in every namespace. Content says whether the object is kept whole (to restore and compare it) or
// only by name; ownerless that only objects no controller owns are kept (a Pod or Job a controller made is its
// controller's); optional that the kind may not be served (Gateway API before its CRDs are installed).
var tracked = []struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	content    bool
	ownerless  bool
	optional   bool
}{
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, kind: "Namespace", content: true},
	{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, kind: "ClusterRole", content: true},
	{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, kind: "ClusterRoleBinding", content: true},
	{gvr: schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}, kind: "ValidatingWebhookConfiguration", content: true},
	{gvr: schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}, kind: "MutatingWebhookConfiguration", content: true},
	{gvr: schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}, kind: "StorageClass", content: true},
	{gvr: schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}, kind: "PriorityClass", content: true},
	{gvr: schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}, kind: "RuntimeClass", content: true},
	{gvr: schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}, kind: "IngressClass", content: true},
	{gvr: schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}, kind: "GatewayClass", content: true, optional: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}, kind: "PersistentVolume"},
	{gvr: schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}, kind: "CertificateSigningRequest"},
	{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, kind: "Deployment", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, kind: "StatefulSet", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, kind: "DaemonSet", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, kind: "CronJob", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, kind: "Job", namespaced: true, content: true, ownerless: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, kind: "Pod", namespaced: true, content: true, ownerless: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "services"}, kind: "Service", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, kind: "ConfigMap", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, kind: "ServiceAccount", namespaced: true},
	{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, kind: "Role", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, kind: "RoleBinding", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, kind: "NetworkPolicy", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, kind: "Ingress", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}, kind: "Gateway", namespaced: true, content: true, optional: true},
	{gvr: schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}, kind: "HTTPRoute", namespaced: true, content: true, optional: true},
	{gvr: schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}, kind: "HorizontalPodAutoscaler", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, kind: "PodDisruptionBudget", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}, kind: "ResourceQuota", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}, kind: "LimitRange", namespaced: true, content: true},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, kind: "PersistentVolumeClaim", namespaced: true},
	{gvr: schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, kind: "CustomResourceDefinition"},
	{gvr: schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}, kind: "APIService"},
}

// laterKinds were tracked after baselines were first recorded: a baseline that does not list its kinds was
// taken without them, and its cluster's objects of these kinds are no residue (deleting every APIService that
// an old baseline lacks would take the API server's own groups offline).
var laterKinds = map[string]bool{"CustomResourceDefinition": true, "APIService": true}

// finished says whether a Pod or Job has run to its end: it steers nothing any more (a debug Pod that exited,
// the node debugger's Pod), so keeping it, or its going, is no change a scenario or a learner made.
func finished(kind string, u *unstructured.Unstructured) bool {
	switch kind {
	case "Pod":
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		return phase == "Succeeded" || phase == "Failed"
	case "Job":
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if (m["type"] == "Complete" || m["type"] == "Failed") && m["status"] == "True" {
				return true
			}
		}
	}
	return false
}

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
	// Finished marks a Pod or Job that has run to its end: neither its coming nor its going is compared.
	Finished bool `json:"finished,omitempty"`
}

// NewObject records u, whole when content is set, else by name.
func NewObject(u *unstructured.Unstructured, content bool) Object {
	return newObject(u, u.GetAPIVersion(), u.GetKind(), content)
}

// newObject records u as of kind: a list's items may not say their own.
func newObject(u *unstructured.Unstructured, apiVersion, kind string, content bool) Object {
	o := Object{APIVersion: apiVersion, Kind: kind, Namespace: u.GetNamespace(), Name: u.GetName(), ExtrasOnly: extrasOnly[kind], Finished: finished(kind, u)}
	if content {
		o.Hash, o.Content = digest(u)
	}
	return o
}

// Key is how a Snapshot's Objects name o.
func (o Object) Key() string { return o.key() }

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

// TaintStrings are the taints as kubectl writes them, key=value:Effect, sorted.
func TaintStrings(ts []corev1.Taint) []string {
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
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for _, t := range tracked {
		g.Go(func() error {
			list, err := c.Dynamic.Resource(t.gvr).List(gctx, metav1.ListOptions{})
			if t.optional && apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("list %s: %w", t.gvr.Resource, err)
			}
			mu.Lock()
			defer mu.Unlock()
			s.Kinds = append(s.Kinds, t.kind)
			for _, u := range list.Items {
				if t.ownerless && len(u.GetOwnerReferences()) > 0 {
					continue
				}
				o := newObject(&u, t.gvr.GroupVersion().String(), t.kind, t.content)
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
	if len(ns) > 0 {
		g.Go(func() error {
			files, units, err := ReadNodes(gctx, ns)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			s.Files, s.Units = files, units
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	slices.Sort(s.Kinds)
	return s, nil
}

// ReadNodes hashes the files and reads the services' states of every node in ns, as Take records them.
func ReadNodes(ctx context.Context, ns []nodes.Node) (files, units map[string]string, err error) {
	files, units = map[string]string{}, map[string]string{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for _, n := range ns {
		g.Go(func() error {
			f, u, err := readNode(gctx, n)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			maps.Copy(files, f)
			maps.Copy(units, u)
			return nil
		})
	}
	return files, units, g.Wait()
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
	// The scheduler binds a Pod once; a Pod pending at one snapshot and running at the next is the same Pod.
	{"spec", "nodeName"},
	// `kubectl rollout restart` stamps the template: new Pods of the same template, no change of what runs.
	{"spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt"},
}

func digest(u *unstructured.Unstructured) (string, json.RawMessage) {
	c := u.DeepCopy()
	for _, f := range volatile {
		unstructured.RemoveNestedField(c.Object, f...)
	}
	// Removing the last annotation leaves an empty map, which an object that never had one lacks.
	for _, f := range [][]string{{"metadata", "annotations"}, {"spec", "template", "metadata", "annotations"}} {
		if m, ok, _ := unstructured.NestedMap(c.Object, f...); ok && len(m) == 0 {
			unstructured.RemoveNestedField(c.Object, f...)
		}
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
	// Kind, Namespace and Name name the object that differs (Kind "Node" for a node's labels, taints and
	// schedulability, Kind "" for a node's files and units, with Node set).
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Node      string `json:"node,omitempty"`
	// Paths are the fields of a changed object that differ ("spec.replicas", "metadata.labels.team").
	Paths []string `json:"paths,omitempty"`
}

func (r Residue) String() string {
	if r.Detail == "" {
		return r.What + " " + r.Target
	}
	return r.What + " " + r.Target + ": " + r.Detail
}

func objectResidue(what, key string, o Object) Residue {
	return Residue{What: what, Target: key, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
}

// Diff lists what differs between base and live; objects of kinds kept by name only are compared by name, as
// are objects base kept by name only (recorded before their kind was kept whole).
func Diff(base, live *Snapshot) []Residue {
	var out []Residue
	for _, k := range slices.Sorted(maps.Keys(base.Objects)) {
		b := base.Objects[k]
		l, ok := live.Objects[k]
		switch {
		case !ok && (b.ExtrasOnly || extrasOnly[b.Kind] || b.Finished || !live.covers(b.Kind)):
		case !ok:
			out = append(out, objectResidue("missing", k, b))
		case b.Hash != "" && b.Hash != l.Hash:
			r := objectResidue("changed", k, b)
			r.Paths = ChangedPaths(b.Content, l.Content)
			out = append(out, r)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(live.Objects)) {
		if o := live.Objects[k]; base.extra(k, o) && !o.Finished {
			out = append(out, objectResidue("extra", k, o))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(base.Nodes)) {
		b, l := base.Nodes[name], live.Nodes[name]
		node := func(aspect, detail string) Residue {
			return Residue{What: "changed", Target: "node " + name + " " + aspect, Detail: detail, Kind: "Node", Name: name, Paths: []string{aspect}}
		}
		if !equalMaps(b.Labels, l.Labels) {
			out = append(out, node("labels", labelChange(b.Labels, l.Labels)))
		}
		if bt, lt := TaintStrings(b.Taints), TaintStrings(l.Taints); !slices.Equal(bt, lt) {
			out = append(out, node("taints", setChange(bt, lt)))
		}
		if b.Unschedulable != l.Unschedulable {
			out = append(out, node("schedulability", map[bool]string{true: "cordoned", false: "uncordoned"}[l.Unschedulable]))
		}
	}
	onNode := func(what, kind, k, detail string) Residue {
		n, _, _ := strings.Cut(k, ":")
		return Residue{What: what, Target: kind + " " + k, Detail: detail, Node: n}
	}
	for _, k := range slices.Sorted(maps.Keys(base.Files)) {
		if l, ok := live.Files[k]; !ok {
			out = append(out, onNode("missing", "file", k, ""))
		} else if l != base.Files[k] {
			out = append(out, onNode("changed", "file", k, ""))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(live.Files)) {
		if _, ok := base.Files[k]; !ok {
			out = append(out, onNode("extra", "file", k, ""))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(base.Units)) {
		if live.Units[k] != base.Units[k] {
			out = append(out, onNode("changed", "unit", k, live.Units[k]+", baseline "+base.Units[k]))
		}
	}
	return out
}

// setChange says what live adds to base and what it lacks: "dedicated=gpu:NoSchedule added, x=:NoExecute removed".
func setChange(base, live []string) string {
	var parts []string
	for _, t := range live {
		if !slices.Contains(base, t) {
			parts = append(parts, t+" added")
		}
	}
	for _, t := range base {
		if !slices.Contains(live, t) {
			parts = append(parts, t+" removed")
		}
	}
	return strings.Join(parts, ", ")
}

// labelChange says how labels changed, kubectl's way: "team=web added, tier removed".
func labelChange(base, live map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(live)) {
		if v, ok := base[k]; !ok {
			parts = append(parts, k+"="+live[k]+" added")
		} else if v != live[k] {
			parts = append(parts, k+"="+live[k]+" (was "+v+")")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(base)) {
		if _, ok := live[k]; !ok {
			parts = append(parts, k+" removed")
		}
	}
	return strings.Join(parts, ", ")
}

// ChangedPaths lists the leaf fields where two objects' contents differ, as dotted paths (a list counts as
// one leaf: "spec.template.spec.containers"); nil when either content is missing.
func ChangedPaths(a, b json.RawMessage) []string {
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return nil
	}
	var out []string
	changedPaths("", x, y, &out)
	sort.Strings(out)
	return out
}

func changedPaths(prefix string, a, b map[string]any, out *[]string) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		am, aok := a[k].(map[string]any)
		bm, bok := b[k].(map[string]any)
		switch {
		case aok && bok:
			changedPaths(p, am, bm, out)
		case !reflect.DeepEqual(a[k], b[k]):
			*out = append(*out, p)
		}
	}
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
