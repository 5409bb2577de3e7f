package evidence

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/cka-lab/lab/internal/journey"
)

// Target is what explain traces: a Pod or a controller by kind and name, or Pods by label.
type Target struct {
	// Kind is one of journey.Traceable; "" selects Pods by Selector.
	Kind      string
	Namespace string
	Name      string
	Selector  string
	// Service is the Service in front of the Pods when the caller knows it (a scenario's checks); "" finds the
	// Services that select the traced Pod. Alone (no Kind, Name or Selector) it targets the Service's
	// backends: the Pods it selects, else those of the workload named like it (a selector that lost them).
	Service string
}

func (t Target) backends() bool {
	return t.Kind == "" && t.Name == "" && t.Selector == "" && t.Service != ""
}

// String names the target as the learner reads it.
func (t Target) String() string {
	switch {
	case t.backends():
		return fmt.Sprintf("the Pods behind Service %s in namespace %s", t.Service, t.Namespace)
	case t.Kind != "":
		return fmt.Sprintf("%s/%s in namespace %s", t.Kind, t.Name, t.Namespace)
	case t.Name != "":
		return fmt.Sprintf("Pod %s in namespace %s", t.Name, t.Namespace)
	}
	return fmt.Sprintf("Pods %s in namespace %s", t.Selector, t.Namespace)
}

// workload is a controller and what it says about its Pods.
type workload struct {
	info journey.Workload
	uid  types.UID
	// selector finds its Pods; current tells a Pod of its current revision.
	selector labels.Selector
	current  func(*corev1.Pod) bool
	// events are the names whose events are the controller's (the Deployment and its current ReplicaSet).
	events []string
}

// owns reports a Pod the workload controls, directly or through one of its ReplicaSets (the caller lists only
// the workload's namespace).
func (w *workload) owns(p *corev1.Pod, rsOwner map[string]types.UID) bool {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return false
	}
	return ref.UID == w.uid || ref.Kind == "ReplicaSet" && rsOwner[ref.Name] == w.uid
}

var notFoundHint = map[string]string{
	"deployment":  "kubectl get deploy -n %s",
	"replicaset":  "kubectl get rs -n %s",
	"statefulset": "kubectl get sts -n %s",
	"daemonset":   "kubectl get ds -n %s",
	"job":         "kubectl get jobs -n %s",
	"pod":         "kubectl get pods -n %s",
}

// notFound is the one-line error for a target that does not exist.
func notFound(t Target) error {
	return fmt.Errorf("%s %q not found in namespace %s (%s lists what is there)", t.Kind, t.Name, t.Namespace, fmt.Sprintf(notFoundHint[t.Kind], t.Namespace))
}

// resolve reads the workload a target names and its Pods (all of them, being deleted or not, of every
// revision); a target by labels or a Pod has no workload until its Pod's controller is followed.
func resolve(ctx context.Context, kc kubernetes.Interface, t Target) (*workload, []corev1.Pod, error) {
	w, err := readWorkload(ctx, kc, t.Namespace, t.Kind, t.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil, notFound(t)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s/%s in %s: %w", t.Kind, t.Name, t.Namespace, err)
	}
	switch {
	case t.backends():
		return backends(ctx, kc, t)
	case t.Kind == "pod":
		p, err := kc.CoreV1().Pods(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil, notFound(t)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read pod %s in %s: %w", t.Name, t.Namespace, err)
		}
		return nil, []corev1.Pod{*p}, nil
	case w == nil:
		if t.Name != "" {
			p, err := kc.CoreV1().Pods(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil, nil, nil
			}
			if err != nil {
				return nil, nil, fmt.Errorf("read pod %s in %s: %w", t.Name, t.Namespace, err)
			}
			return nil, []corev1.Pod{*p}, nil
		}
		pl, err := kc.CoreV1().Pods(t.Namespace).List(ctx, metav1.ListOptions{LabelSelector: t.Selector})
		if err != nil {
			return nil, nil, fmt.Errorf("list Pods %s in %s: %w", t.Selector, t.Namespace, err)
		}
		return nil, pl.Items, nil
	}
	pods, err := workloadPods(ctx, kc, t.Namespace, w)
	return w, pods, err
}

// backends are the Pods a Service selects, else, when it selects none, the Pods of the Deployment or
// StatefulSet named like it.
func backends(ctx context.Context, kc kubernetes.Interface, t Target) (*workload, []corev1.Pod, error) {
	svc, err := kc.CoreV1().Services(t.Namespace).Get(ctx, t.Service, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, fmt.Errorf("service %q not found in namespace %s (kubectl get svc -n %s lists what is there)", t.Service, t.Namespace, t.Namespace)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read Service %s/%s: %w", t.Namespace, t.Service, err)
	}
	if len(svc.Spec.Selector) > 0 {
		pl, err := kc.CoreV1().Pods(t.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
		if err != nil {
			return nil, nil, fmt.Errorf("list the Pods of Service %s/%s: %w", t.Namespace, t.Service, err)
		}
		if len(pl.Items) > 0 {
			return nil, pl.Items, nil
		}
	}
	for _, kind := range []string{"deployment", "statefulset"} {
		w, err := readWorkload(ctx, kc, t.Namespace, kind, t.Service)
		if err != nil {
			continue
		}
		pods, err := workloadPods(ctx, kc, t.Namespace, w)
		return w, pods, err
	}
	return nil, nil, fmt.Errorf("service %s/%s selects no Pod (%s), and no Deployment or StatefulSet is named like it",
		t.Namespace, t.Service, labels.SelectorFromSet(svc.Spec.Selector))
}

// workloadPods lists the Pods a workload controls.
func workloadPods(ctx context.Context, kc kubernetes.Interface, ns string, w *workload) ([]corev1.Pod, error) {
	pl, err := kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: w.selector.String()})
	if err != nil {
		return nil, fmt.Errorf("list the Pods of %s/%s: %w", w.info.Kind, w.info.Name, err)
	}
	rsOwner := map[string]types.UID{}
	if w.info.Kind == "deployment" {
		rsl, err := kc.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list ReplicaSets in %s: %w", ns, err)
		}
		for _, rs := range rsl.Items {
			if ref := metav1.GetControllerOf(&rs); ref != nil {
				rsOwner[rs.Name] = ref.UID
			}
		}
	}
	var out []corev1.Pod
	for _, p := range pl.Items {
		if w.owns(&p, rsOwner) {
			out = append(out, p)
		}
	}
	return out, nil
}

// readWorkload reads a controller; nil for a Pod or a selection by labels.
func readWorkload(ctx context.Context, kc kubernetes.Interface, ns, kind, name string) (*workload, error) {
	switch kind {
	case "deployment":
		d, err := kc.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return deploymentWorkload(ctx, kc, d)
	case "replicaset":
		rs, err := kc.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return replicasWorkload("replicaset", rs.Namespace, rs.Name, rs.UID, rs.Spec.Selector, rs.Spec.Replicas, nil, []string{rs.Name})
	case "statefulset":
		s, err := kc.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		rev := s.Status.UpdateRevision
		current := func(p *corev1.Pod) bool { return rev == "" || p.Labels[appsv1.ControllerRevisionHashLabelKey] == rev }
		return replicasWorkload("statefulset", s.Namespace, s.Name, s.UID, s.Spec.Selector, s.Spec.Replicas, current, []string{s.Name})
	case "daemonset":
		ds, err := kc.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return daemonSetWorkload(ds)
	case "job":
		j, err := kc.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return jobWorkload(j)
	}
	return nil, nil
}

func selectorOf(kind, name string, ls *metav1.LabelSelector) (labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("selector of %s/%s: %w", kind, name, err)
	}
	return sel, nil
}

func replicasWorkload(kind, ns, name string, uid types.UID, ls *metav1.LabelSelector, replicas *int32, current func(*corev1.Pod) bool, events []string) (*workload, error) {
	sel, err := selectorOf(kind, name, ls)
	if err != nil {
		return nil, err
	}
	want := int32(1)
	if replicas != nil {
		want = *replicas
	}
	w := &workload{info: journey.Workload{Kind: kind, Name: name, Namespace: ns, Desired: &want}, uid: uid, selector: sel, current: current, events: events}
	if want == 0 {
		w.info.Why = fmt.Sprintf("%s/%s spec.replicas is 0", kind, name)
	}
	return w, nil
}

// deploymentWorkload reads a Deployment with its current ReplicaSet (the highest revision), whose Pods are
// the ones a learner is asked about: while a rollout is stuck, the older ones keep serving.
func deploymentWorkload(ctx context.Context, kc kubernetes.Interface, d *appsv1.Deployment) (*workload, error) {
	rsl, err := kc.AppsV1().ReplicaSets(d.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list ReplicaSets in %s: %w", d.Namespace, err)
	}
	current, best := "", -1
	for _, rs := range rsl.Items {
		if ref := metav1.GetControllerOf(&rs); ref == nil || ref.UID != d.UID {
			continue
		}
		if rev, err := strconv.Atoi(rs.Annotations["deployment.kubernetes.io/revision"]); err == nil && rev > best {
			current, best = rs.Name, rev
		}
	}
	inCurrent := func(p *corev1.Pod) bool {
		ref := metav1.GetControllerOf(p)
		return current == "" || ref != nil && ref.Name == current
	}
	w, err := replicasWorkload("deployment", d.Namespace, d.Name, d.UID, d.Spec.Selector, d.Spec.Replicas, inCurrent, slices.DeleteFunc([]string{d.Name, current}, func(s string) bool { return s == "" }))
	if err != nil {
		return nil, err
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse {
			w.info.Stuck = oneLine(fmt.Sprintf("%s=%s (%s): %s", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	if d.Spec.Paused && w.info.Why == "" {
		w.info.Stuck = "the rollout is paused (spec.paused)"
	}
	return w, nil
}

func daemonSetWorkload(ds *appsv1.DaemonSet) (*workload, error) {
	sel, err := selectorOf("daemonset", ds.Name, ds.Spec.Selector)
	if err != nil {
		return nil, err
	}
	want := ds.Status.DesiredNumberScheduled
	w := &workload{info: journey.Workload{Kind: "daemonset", Name: ds.Name, Namespace: ds.Namespace, Desired: &want}, uid: ds.UID, selector: sel, events: []string{ds.Name}}
	if want == 0 {
		w.info.Why = fmt.Sprintf("daemonset/%s desires 0 Pods: no node fits its nodeSelector, affinity and tolerations", ds.Name)
	}
	return w, nil
}

func jobWorkload(j *batchv1.Job) (*workload, error) {
	sel, err := selectorOf("job", j.Name, j.Spec.Selector)
	if err != nil {
		return nil, err
	}
	w := &workload{info: journey.Workload{Kind: "job", Name: j.Name, Namespace: j.Namespace}, uid: j.UID, selector: sel, events: []string{j.Name}}
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			w.info.Why = oneLine(fmt.Sprintf("job/%s %s=%s (%s): %s", j.Name, c.Type, c.Status, c.Reason, c.Message))
		}
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		w.info.Why = fmt.Sprintf("job/%s spec.suspend is true", j.Name)
	}
	return w, nil
}

// ownerOf follows a Pod's controller up to the workload a learner names (a ReplicaSet's Deployment), so a Pod
// traced by name or labels gets its rollout's story too; nil for a bare Pod or one whose controller is gone.
func ownerOf(ctx context.Context, kc kubernetes.Interface, p *corev1.Pod) *workload {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return nil
	}
	kind, name := journey.NormalKind(ref.Kind), ref.Name
	if kind == "replicaset" {
		if rs, err := kc.AppsV1().ReplicaSets(p.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
			if up := metav1.GetControllerOf(rs); up != nil && up.Kind == "Deployment" {
				kind, name = "deployment", up.Name
			}
		}
	}
	w, err := readWorkload(ctx, kc, p.Namespace, kind, name)
	if err != nil {
		return nil
	}
	return w
}

// ownerOfSelector finds the controller whose Pod template the selector matches, for a selection by labels
// that matches no Pod (a Deployment scaled to 0 has none).
func ownerOfSelector(ctx context.Context, kc kubernetes.Interface, ns, selector string) *workload {
	sel, err := labels.Parse(selector)
	if err != nil || sel.Empty() {
		return nil
	}
	if dl, err := kc.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for i := range dl.Items {
			if sel.Matches(labels.Set(dl.Items[i].Spec.Template.Labels)) {
				w, _ := deploymentWorkload(ctx, kc, &dl.Items[i])
				return w
			}
		}
	}
	if sl, err := kc.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, s := range sl.Items {
			if sel.Matches(labels.Set(s.Spec.Template.Labels)) {
				w, _ := readWorkload(ctx, kc, ns, "statefulset", s.Name)
				return w
			}
		}
	}
	if dsl, err := kc.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for i := range dsl.Items {
			if sel.Matches(labels.Set(dsl.Items[i].Spec.Template.Labels)) {
				w, _ := daemonSetWorkload(&dsl.Items[i])
				return w
			}
		}
	}
	return nil
}

// pick chooses the Pod to trace: of the current revision when the workload has one, not being deleted, the
// representative of those by name order (the furthest of the Pods neither Ready nor completed); nil when there
// is none.
func pick(w *workload, pods []corev1.Pod) *corev1.Pod {
	var cands []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && (w == nil || w.current == nil || w.current(&p)) {
			cands = append(cands, p)
		}
	}
	slices.SortFunc(cands, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return representative(cands)
}

// oldReady counts the Ready Pods of earlier revisions.
func oldReady(w *workload, pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if w.current != nil && !w.current(&p) && p.DeletionTimestamp == nil && Ready(&p) {
			n++
		}
	}
	return n
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
