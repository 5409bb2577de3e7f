package grader

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A workload task is judged by its controller, as Kubernetes does: a Pod counts when the current revision of
// the Deployment, StatefulSet or DaemonSet that selects it owns it (or a Job, or the node of a static Pod),
// never when it merely carries the workload's labels. A bare Pod with those labels, Pods relabelled so their
// ReplicaSet let go of them, a ReplicaSet written by hand, or an old revision's Pods left running by a stuck
// rollout do not make the workload Ready.

// revisionAnnotation is the deployment controller's revision, the same on a Deployment and its new ReplicaSet.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// owners reads the controllers of a namespace's Pods once per check.
type owners struct {
	e  Env
	ns string
	rs map[string]*appsv1.ReplicaSet
	// revisions maps a StatefulSet's or DaemonSet's UID to its current revision's controller-revision-hash.
	revisions map[string]string
}

// current says whether the Pod's owner is the current revision of its workload; why says what owns it instead.
func (o *owners) current(ctx context.Context, p *corev1.Pod) (ok bool, why string, err error) {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return false, fmt.Sprintf("Pod %s belongs to no controller: a bare Pod does not make a workload Ready", p.Name), nil
	}
	switch ref.Kind {
	case "ReplicaSet":
		return o.currentReplicaSet(ctx, p, ref.Name)
	case "StatefulSet", "DaemonSet":
		if err := o.readRevisions(ctx); err != nil {
			return false, "", err
		}
		if hash, known := o.revisions[string(ref.UID)]; known && p.Labels[appsv1.ControllerRevisionHashLabelKey] != hash {
			return false, fmt.Sprintf("Pod %s is from an old revision of %s/%s", p.Name, ref.Kind, ref.Name), nil
		}
	}
	return true, "", nil
}

func (o *owners) currentReplicaSet(ctx context.Context, p *corev1.Pod, name string) (bool, string, error) {
	if o.rs == nil {
		list, err := o.e.Clients.Kube.AppsV1().ReplicaSets(o.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", fmt.Errorf("list ReplicaSets in %s: %w", o.ns, err)
		}
		o.rs = map[string]*appsv1.ReplicaSet{}
		for i := range list.Items {
			o.rs[list.Items[i].Name] = &list.Items[i]
		}
	}
	rs := o.rs[name]
	if rs == nil {
		return false, fmt.Sprintf("Pod %s belongs to ReplicaSet %s, which no longer exists", p.Name, name), nil
	}
	ref := metav1.GetControllerOf(rs)
	if ref == nil || ref.Kind != "Deployment" {
		return false, fmt.Sprintf("Pod %s belongs to ReplicaSet %s, which no Deployment manages", p.Name, name), nil
	}
	d, err := o.e.Clients.Kube.AppsV1().Deployments(o.ns).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Sprintf("Pod %s belongs to deployment/%s, which cannot be read: %v", p.Name, ref.Name, err), nil
	}
	if d.Status.ObservedGeneration < d.Generation {
		return false, fmt.Sprintf("deployment/%s has not rolled out its latest spec yet", d.Name), nil
	}
	if rs.Annotations[revisionAnnotation] != d.Annotations[revisionAnnotation] {
		return false, fmt.Sprintf("Pod %s is from revision %s of deployment/%s, not its current revision %s",
			p.Name, rs.Annotations[revisionAnnotation], d.Name, d.Annotations[revisionAnnotation]), nil
	}
	if why := changedInPlace(p, &rs.Spec.Template); why != "" {
		return false, why, nil
	}
	return true, "", nil
}

// changedInPlace says how a Pod runs another image than its template where the image was set on the Pod
// itself (`kubectl set image pod/...`, an edit): the template, still broken, is what a restarted or replaced
// Pod runs. An image a mutating webhook set when the Pod was created is what the API server admitted, and
// counts: only an update after creation is a change in place.
func changedInPlace(p *corev1.Pod, tmpl *corev1.PodTemplateSpec) string {
	if !imageUpdated(p) {
		return ""
	}
	want := map[string]string{}
	for _, c := range slices.Concat(tmpl.Spec.InitContainers, tmpl.Spec.Containers) {
		want[c.Name] = c.Image
	}
	for _, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
		if w, ok := want[c.Name]; ok && w != c.Image {
			return fmt.Sprintf("Pod %s runs %s in container %s, set on the Pod itself; its template still says %s, which every replaced Pod runs", p.Name, c.Image, c.Name, w)
		}
	}
	return ""
}

// imageUpdated says whether someone other than the controller that made the Pod owns one of its container
// images, by its managed fields: the controller's own entry (kube-controller-manager, with whatever a webhook
// set at admission) is how the Pod was created, any other is a write to the running Pod.
func imageUpdated(p *corev1.Pod) bool {
	for _, mf := range p.ManagedFields {
		if mf.Manager != "kube-controller-manager" && mf.Subresource == "" && mf.FieldsV1 != nil && bytes.Contains(mf.FieldsV1.Raw, []byte(`"f:image"`)) {
			return true
		}
	}
	return false
}

// readRevisions finds the current revision of every StatefulSet (its updateRevision) and DaemonSet (its newest
// ControllerRevision) in the namespace.
func (o *owners) readRevisions(ctx context.Context) error {
	if o.revisions != nil {
		return nil
	}
	kc := o.e.Clients.Kube.AppsV1()
	o.revisions = map[string]string{}
	sts, err := kc.StatefulSets(o.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list StatefulSets in %s: %w", o.ns, err)
	}
	for _, s := range sts.Items {
		if s.Status.UpdateRevision != "" {
			o.revisions[string(s.UID)] = s.Status.UpdateRevision
		}
	}
	crs, err := kc.ControllerRevisions(o.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list ControllerRevisions in %s: %w", o.ns, err)
	}
	newest := map[string]int64{}
	for _, cr := range crs.Items {
		ref := metav1.GetControllerOf(&cr)
		if ref == nil || ref.Kind != "DaemonSet" {
			continue
		}
		if uid := string(ref.UID); cr.Revision > newest[uid] {
			newest[uid] = cr.Revision
			o.revisions[uid] = cr.Labels[appsv1.ControllerRevisionHashLabelKey]
		}
	}
	return nil
}

// controlled keeps the Pods the current revision of their controller owns; dropped says why the first other
// Pod was left out.
func (e Env) controlled(ctx context.Context, ns string, pods []corev1.Pod) (kept []corev1.Pod, dropped string, err error) {
	o := &owners{e: e, ns: ns}
	for i := range pods {
		ok, why, err := o.current(ctx, &pods[i])
		if err != nil {
			return nil, "", err
		}
		if ok {
			kept = append(kept, pods[i])
		} else if dropped == "" {
			dropped = why
		}
	}
	return kept, dropped, nil
}
