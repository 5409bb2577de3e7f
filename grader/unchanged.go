package grader

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/cka-lab/lab/internal/baseline"
	"github.com/cka-lab/lab/scenarios"
)

// labNamespace holds lab's own objects (the attempt's record), which lab writes while the learner works.
const labNamespace = "lab-system"

// nodeReads caches each grading run's reading of the nodes' files and services: one exec per node, which
// every round of a settle would repeat for files the learner changed before asking for the check.
var nodeReads struct {
	sync.Mutex
	done         bool
	files, units map[string]string
}

// starts caches the snapshots the task started from, by file.
var starts sync.Map

// lastLive keeps the last comparison for unchangedEvery: a Take lists every tracked kind cluster-wide, and
// settle evaluates every check each half second, which would keep a small API server busy for the guard alone.
var lastLive struct {
	sync.Mutex
	at     time.Time
	result Result
}

const unchangedEvery = 2 * time.Second

// unchanged passes while no net change since the task was shown lies outside what the task involves.
func (e Env) unchanged(ctx context.Context, c *scenarios.UnchangedCheck) Result {
	lastLive.Lock()
	defer lastLive.Unlock()
	if !lastLive.at.IsZero() && time.Since(lastLive.at) < unchangedEvery {
		return lastLive.result
	}
	r := e.compareWithStart(ctx, c)
	lastLive.at, lastLive.result = time.Now(), r
	return r
}

func (e Env) compareWithStart(ctx context.Context, c *scenarios.UnchangedCheck) Result {
	start, err := loadStart(c.Since)
	if err != nil {
		return e.fail("cannot read the snapshot taken when the task was shown: %v", err)
	}
	live, err := baseline.Take(ctx, e.Clients, nil)
	if err != nil {
		return e.fail("cannot read the cluster: %v", err)
	}
	if len(start.Files) > 0 || len(start.Units) > 0 {
		if live.Files, live.Units, err = e.readNodesOnce(ctx); err != nil {
			return e.fail("cannot read the nodes: %v", err)
		}
	}
	out := Outside(start, live, c.Scope)
	if len(out) == 0 {
		return pass("nothing outside the task changed since it was shown")
	}
	const shown = 3
	var parts []string
	for _, r := range out[:min(shown, len(out))] {
		parts = append(parts, describeChange(r))
	}
	more := ""
	if len(out) > shown {
		more = fmt.Sprintf(" (and %d more)", len(out)-shown)
	}
	return e.fail("the task does not involve what changed: %s%s; undo it, the task is solved without it", strings.Join(parts, "; "), more)
}

func (e Env) readNodesOnce(ctx context.Context) (files, units map[string]string, err error) {
	nodeReads.Lock()
	defer nodeReads.Unlock()
	if !nodeReads.done {
		ns, err := e.Nodes()
		if err != nil {
			return nil, nil, err
		}
		if nodeReads.files, nodeReads.units, err = baseline.ReadNodes(ctx, ns); err != nil {
			return nil, nil, err
		}
		nodeReads.done = true
	}
	return nodeReads.files, nodeReads.units, nil
}

func loadStart(path string) (*baseline.Snapshot, error) {
	if s, ok := starts.Load(path); ok {
		return s.(*baseline.Snapshot), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s baseline.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Rehash()
	starts.Store(path, &s)
	return &s, nil
}

// describeChange says what changed the way kubectl names objects: "deployment cache -n shop scaled: spec.replicas".
func describeChange(r baseline.Residue) string {
	what := map[string]string{"extra": "created", "missing": "deleted", "changed": "changed"}[r.What]
	var obj string
	switch {
	case r.Kind == "Node":
		obj = "node " + r.Name
	case r.Kind == "":
		obj = r.Target
	case r.Namespace == "":
		obj = strings.ToLower(r.Kind) + " " + r.Name
	default:
		obj = strings.ToLower(r.Kind) + " " + r.Name + " -n " + r.Namespace
	}
	s := obj + " " + what
	switch {
	case r.Detail != "":
		s += " (" + strings.Join(r.Paths, ", ") + ": " + r.Detail + ")"
	case len(r.Paths) > 0:
		s += " (" + strings.Join(r.Paths[:min(3, len(r.Paths))], ", ") + ")"
	}
	return s
}

// Outside returns the net changes from start to live that scope does not involve: what a fix had no reason to
// touch. What the cluster changes on its own (the node lifecycle's taints, an autoscaler's replicas, lab's
// own record) is not a change.
func Outside(start, live *baseline.Snapshot, scope scenarios.Scope) []baseline.Residue {
	scope = scope.Normalized()
	in := involvement{start: start, live: live, scope: scope}
	in.resolve()
	var out []baseline.Residue
	for _, r := range baseline.Diff(start, live) {
		if !in.involves(r) {
			out = append(out, r)
		}
	}
	return out
}

// involvement resolves what a Scope names only indirectly against the objects of the snapshots.
type involvement struct {
	start, live *baseline.Snapshot
	scope       scenarios.Scope
	// objects are the keys involved through the Pods, Services and subjects the task reads.
	objects map[string]bool
	// scaled are the workloads an autoscaler sets the replicas of.
	scaled map[string]bool
}

// workloadKinds run Pods from a template at podTemplate (a Pod is its own template).
var podTemplate = map[string][]string{
	"Deployment":  {"spec", "template"},
	"StatefulSet": {"spec", "template"},
	"DaemonSet":   {"spec", "template"},
	"Job":         {"spec", "template"},
	"CronJob":     {"spec", "jobTemplate", "spec", "template"},
	"Pod":         nil,
}

func content(o baseline.Object) map[string]any {
	var m map[string]any
	if len(o.Content) > 0 {
		_ = json.Unmarshal(o.Content, &m)
	}
	return m
}

func (in *involvement) resolve() {
	in.objects, in.scaled = map[string]bool{}, map[string]bool{}
	// Objects of the start decide: a selector a learner loosened afterwards must not pull in what it now matches.
	var workloads []string
	templates := map[string]map[string]any{}
	podLabels := map[string]labels.Set{}
	for k, o := range in.start.Objects {
		path, ok := podTemplate[o.Kind]
		if !ok {
			continue
		}
		c := content(o)
		tmpl := c
		if path != nil {
			tmpl, _, _ = unstructured.NestedMap(c, path...)
		}
		if tmpl == nil {
			continue
		}
		templates[k] = tmpl
		lbls, _, _ := unstructured.NestedStringMap(tmpl, "metadata", "labels")
		podLabels[k] = lbls
		if in.scope.Has(o.Kind, o.Namespace, o.Name) || in.selectedByTask(o.Namespace, lbls) {
			in.objects[k] = true
			workloads = append(workloads, k)
		}
	}
	for _, k := range workloads {
		o := in.start.Objects[k]
		for _, ref := range templateRefs(templates[k]) {
			ns := o.Namespace
			if ref[0] == "PriorityClass" || ref[0] == "RuntimeClass" {
				ns = ""
			}
			in.objects[scenarios.ObjectKey(ref[0], ns, ref[1])] = true
		}
	}
	for k, o := range in.start.Objects {
		c := content(o)
		switch o.Kind {
		case "NetworkPolicy", "PodDisruptionBudget":
			path := []string{"spec", "podSelector"}
			if o.Kind == "PodDisruptionBudget" {
				path = []string{"spec", "selector"}
			}
			sel, _, _ := unstructured.NestedMap(c, path...)
			if in.selectsWorkload(o.Namespace, labelSelector(sel), workloads, podLabels) {
				in.objects[k] = true
			}
		case "Service":
			sel, _, _ := unstructured.NestedStringMap(c, "spec", "selector")
			if len(sel) > 0 && in.selectsWorkload(o.Namespace, labels.SelectorFromSet(sel), workloads, podLabels) {
				in.objects[k] = true
			}
		}
	}
	for _, snap := range []*baseline.Snapshot{in.start, in.live} {
		for k, o := range snap.Objects {
			c := content(o)
			switch o.Kind {
			case "HorizontalPodAutoscaler":
				kind, _, _ := unstructured.NestedString(c, "spec", "scaleTargetRef", "kind")
				name, _, _ := unstructured.NestedString(c, "spec", "scaleTargetRef", "name")
				target := scenarios.ObjectKey(kind, o.Namespace, name)
				in.scaled[target] = true
				if in.objects[target] || in.scope.Has(kind, o.Namespace, name) {
					in.objects[k] = true
				}
			case "RoleBinding", "ClusterRoleBinding":
				if in.namesSubject(c, o.Namespace) {
					in.objects[k] = true
					kind, _, _ := unstructured.NestedString(c, "roleRef", "kind")
					name, _, _ := unstructured.NestedString(c, "roleRef", "name")
					ns := o.Namespace
					if kind == "ClusterRole" {
						ns = ""
					}
					in.objects[scenarios.ObjectKey(kind, ns, name)] = true
				}
			}
		}
	}
	for _, su := range in.scope.Subjects {
		if rest, ok := strings.CutPrefix(su.Name, "system:serviceaccount:"); ok {
			if ns, name, ok := strings.Cut(rest, ":"); ok {
				in.objects[scenarios.ObjectKey("ServiceAccount", ns, name)] = true
			}
		}
	}
}

// selectedByTask says whether Pods labelled lbls in ns are ones the task reads, or reaches through a Service
// it names (by the Service's selector when the task was shown).
func (in *involvement) selectedByTask(ns string, lbls map[string]string) bool {
	set := labels.Set(lbls)
	for _, p := range in.scope.Pods {
		if p.Namespace != ns || p.Selector == "" {
			continue
		}
		if sel, err := labels.Parse(p.Selector); err == nil && sel.Matches(set) {
			return true
		}
	}
	for _, s := range in.scope.Services {
		if s.Namespace != ns {
			continue
		}
		o, ok := in.start.Objects[scenarios.ObjectKey("Service", s.Namespace, s.Name)]
		if !ok {
			continue
		}
		sel, _, _ := unstructured.NestedStringMap(content(o), "spec", "selector")
		if len(sel) > 0 && labels.SelectorFromSet(sel).Matches(set) {
			return true
		}
	}
	return false
}

// selectsWorkload says whether sel, in ns, selects the Pods of one of the task's workloads, by the labels of
// their templates.
func (in *involvement) selectsWorkload(ns string, sel labels.Selector, workloads []string, podLabels map[string]labels.Set) bool {
	if sel == nil {
		return false
	}
	for _, k := range workloads {
		if in.start.Objects[k].Namespace == ns && sel.Matches(podLabels[k]) {
			return true
		}
	}
	return false
}

// labelSelector converts a LabelSelector as JSON; nil when it does not parse.
func labelSelector(m map[string]any) labels.Selector {
	if m == nil {
		return nil
	}
	var parts []string
	ml, _, _ := unstructured.NestedStringMap(m, "matchLabels")
	for k, v := range ml {
		parts = append(parts, k+"="+v)
	}
	exprs, _, _ := unstructured.NestedSlice(m, "matchExpressions")
	for _, x := range exprs {
		e, _ := x.(map[string]any)
		key, _ := e["key"].(string)
		op, _ := e["operator"].(string)
		var vals []string
		if vs, ok := e["values"].([]any); ok {
			for _, v := range vs {
				s, _ := v.(string)
				vals = append(vals, s)
			}
		}
		switch op {
		case "In":
			parts = append(parts, key+" in ("+strings.Join(vals, ",")+")")
		case "NotIn":
			parts = append(parts, key+" notin ("+strings.Join(vals, ",")+")")
		case "Exists":
			parts = append(parts, key)
		case "DoesNotExist":
			parts = append(parts, "!"+key)
		}
	}
	sel, err := labels.Parse(strings.Join(parts, ","))
	if err != nil {
		return nil
	}
	return sel
}

// templateRefs are the objects a Pod template uses by name, as [kind, name]: its ServiceAccount, priority and
// runtime classes, the ConfigMaps and Secrets of its volumes and environment, its claims.
func templateRefs(tmpl map[string]any) [][2]string {
	var pod corev1.PodTemplateSpec
	if runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &pod) != nil {
		return nil
	}
	var out [][2]string
	add := func(kind, name string) {
		if name != "" {
			out = append(out, [2]string{kind, name})
		}
	}
	spec := pod.Spec
	add("ServiceAccount", spec.ServiceAccountName)
	add("PriorityClass", spec.PriorityClassName)
	add("RuntimeClass", ptr.Deref(spec.RuntimeClassName, ""))
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil {
			add("ConfigMap", v.ConfigMap.Name)
		}
		if v.Secret != nil {
			add("Secret", v.Secret.SecretName)
		}
		if v.PersistentVolumeClaim != nil {
			add("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil {
					add("ConfigMap", src.ConfigMap.Name)
				}
				if src.Secret != nil {
					add("Secret", src.Secret.Name)
				}
			}
		}
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				add("ConfigMap", e.ValueFrom.ConfigMapKeyRef.Name)
			}
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				add("Secret", e.ValueFrom.SecretKeyRef.Name)
			}
		}
		for _, f := range c.EnvFrom {
			if f.ConfigMapRef != nil {
				add("ConfigMap", f.ConfigMapRef.Name)
			}
			if f.SecretRef != nil {
				add("Secret", f.SecretRef.Name)
			}
		}
	}
	return out
}

// namesSubject says whether a binding (its content c, in ns) names one of the task's subjects.
func (in *involvement) namesSubject(c map[string]any, ns string) bool {
	subjects, _, _ := unstructured.NestedSlice(c, "subjects")
	for _, s := range subjects {
		m, _ := s.(map[string]any)
		kind, _ := m["kind"].(string)
		name, _ := m["name"].(string)
		sns, _ := m["namespace"].(string)
		for _, su := range in.scope.Subjects {
			switch kind {
			case "User":
				if name == su.Name {
					return true
				}
			case "Group":
				if slices.Contains(su.Groups, name) {
					return true
				}
			case "ServiceAccount":
				if sns == "" {
					sns = ns
				}
				if su.Name == "system:serviceaccount:"+sns+":"+name {
					return true
				}
			}
		}
	}
	return false
}

// involves says whether the task involves a difference, or the cluster made it on its own.
func (in *involvement) involves(r baseline.Residue) bool {
	sc := in.scope
	switch {
	case r.Kind == "" && r.Node != "":
		return sc.HasInside(r.Node)
	case r.Kind == "Node":
		return sc.HasNode(r.Name) || r.Paths[0] == "taints" && in.onlyLifecycleTaints(r.Name)
	case r.Namespace == labNamespace:
		return true
	case r.Kind == "CertificateSigningRequest" || r.Kind == "PersistentVolume":
		// The cluster makes and removes these itself with what asks for them: a request grants nothing until
		// approved (which the checks that need it judge), and a provisioner makes and deletes volumes for
		// claims.
		return true
	case r.Kind == "Namespace":
		return sc.Has("Namespace", "", r.Name) || r.What == "extra" && sc.HasNamespace(r.Name)
	case in.createdNamespace(r.Namespace):
		// Reported once, as the namespace.
		return true
	case sc.Has(r.Kind, r.Namespace, r.Name) || in.objects[scenarios.ObjectKey(r.Kind, r.Namespace, r.Name)]:
		return true
	case r.What == "extra":
		if r.Namespace == "" {
			return sc.HasKind(r.Kind)
		}
		return sc.HasNamespace(r.Namespace)
	case r.What == "changed" && in.scaled[scenarios.ObjectKey(r.Kind, r.Namespace, r.Name)]:
		return len(r.Paths) == 1 && r.Paths[0] == "spec.replicas"
	}
	return false
}

// createdNamespace says whether ns was created after the task was shown.
func (in *involvement) createdNamespace(ns string) bool {
	if ns == "" {
		return false
	}
	k := scenarios.ObjectKey("Namespace", "", ns)
	_, before := in.start.Objects[k]
	_, now := in.live.Objects[k]
	return now && !before
}

// onlyLifecycleTaints says whether the node's taints differ only in the ones the node lifecycle controller
// sets and clears (node.kubernetes.io/not-ready, unreachable, unschedulable, pressure).
func (in *involvement) onlyLifecycleTaints(node string) bool {
	own := func(n baseline.Node) []string {
		return slices.DeleteFunc(baseline.TaintStrings(n.Taints), func(t string) bool { return strings.HasPrefix(t, "node.kubernetes.io/") })
	}
	return slices.Equal(own(in.start.Nodes[node]), own(in.live.Nodes[node]))
}
