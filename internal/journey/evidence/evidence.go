// Package evidence reads from a live cluster what journey.Trace needs to tell where a Pod stopped: the Pod,
// its events, its node, its claims, its owners' events, and (for explain) the Service, policies, DNS and logs a
// Running Pod meets. It only reads.
package evidence

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/cka-lab/lab/internal/journey"
)

// Pods lists the Pods selected by name or label selector, skipping Pods being deleted (a rollout's old Pods
// are not what a learner is asked about).
func Pods(ctx context.Context, kc kubernetes.Interface, ns, name, selector string) ([]corev1.Pod, error) {
	if name != "" {
		p, err := kc.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []corev1.Pod{*p}, nil
	}
	pl, err := kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range pl.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// forPod gathers the evidence about one Pod (nil: no Pod exists); owner reports the controllers whose events
// belong to it, e.g. a ReplicaSet's FailedCreate.
func forPod(ctx context.Context, kc kubernetes.Interface, ns string, pod *corev1.Pod, owner func(name string) bool) (journey.Evidence, error) {
	ev := journey.Evidence{Pod: pod}
	all, err := kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return ev, fmt.Errorf("list events in %s: %w", ns, err)
	}
	claims := map[string]bool{}
	if pod != nil {
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				claims[v.PersistentVolumeClaim.ClaimName] = true
			}
		}
		for name := range claims {
			pvc, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				ev.PVCs = append(ev.PVCs, *pvc)
			}
		}
		if pod.Spec.NodeName != "" {
			if n, err := kc.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{}); err == nil {
				ev.Node = n
			}
		} else if nl, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
			// A NotReady node explains the not-ready taint the scheduler could not tolerate.
			ev.Nodes = nl.Items
		}
	}
	for _, e := range all.Items {
		o := e.InvolvedObject
		switch {
		case pod != nil && o.Kind == "Pod" && o.Name == pod.Name:
			ev.Events = append(ev.Events, e)
		case o.Kind == "PersistentVolumeClaim" && claims[o.Name]:
			ev.Events = append(ev.Events, e)
		case (o.Kind == "ReplicaSet" || o.Kind == "Deployment" || o.Kind == "StatefulSet" || o.Kind == "DaemonSet" || o.Kind == "Job") && owner(o.Name):
			ev.OwnerEvents = append(ev.OwnerEvents, e)
		}
	}
	return ev, nil
}

// ownerNames matches the Pod's owner chain by name, or, with no Pod, workloads named with the prefix.
func ownerNames(ctx context.Context, kc kubernetes.Interface, ns string, pod *corev1.Pod, prefix string) func(string) bool {
	names := map[string]bool{}
	if pod != nil {
		for _, ref := range pod.OwnerReferences {
			names[ref.Name] = true
			if ref.Kind == "ReplicaSet" {
				if rs, err := kc.AppsV1().ReplicaSets(ns).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
					for _, r := range rs.OwnerReferences {
						names[r.Name] = true
					}
				}
			}
		}
	}
	return func(name string) bool {
		return names[name] || (pod == nil && prefix != "" && strings.HasPrefix(name, prefix))
	}
}

// Trace gathers evidence about the Pods selected (the first one not Ready, or the first one) and traces the
// journey; with no Pod it traces from the owners' events.
func Trace(ctx context.Context, kc kubernetes.Interface, ns, name, selector, ownerPrefix string, svc *journey.ServiceInfo) (journey.Result, error) {
	pods, err := Pods(ctx, kc, ns, name, selector)
	if err != nil {
		return journey.Result{}, err
	}
	pod := representative(pods)
	ev, err := forPod(ctx, kc, ns, pod, ownerNames(ctx, kc, ns, pod, ownerPrefix))
	if err != nil {
		return journey.Result{}, err
	}
	ev.Service, ev.Now = svc, time.Now()
	return journey.Trace(ev), nil
}

// representative is the Pod whose journey stands for the workload's: a Pod that is neither Ready nor Succeeded,
// the one that got furthest of those. Pods of one template that stop at different stages are the later stop's,
// since another Pod passed the earlier one: a Pod still mounting its volumes a second after its sibling reached
// the image pull is catching up (the kubelet's first mount of a new namespace's ConfigMap can time out once),
// not where the workload stops. Equal progress keeps the order of pods.
func representative(pods []corev1.Pod) *corev1.Pod {
	done := func(p *corev1.Pod) bool { return Ready(p) || p.Status.Phase == corev1.PodSucceeded }
	var pod *corev1.Pod
	for i := range pods {
		p := &pods[i]
		switch {
		case pod == nil:
			pod = p
		case done(pod) != done(p):
			if done(pod) {
				pod = p
			}
		case !done(p) && progress(p) > progress(pod):
			pod = p
		}
	}
	return pod
}

// progress ranks how far a Pod got on its journey, from the Pod's status alone: scheduled, started by its
// kubelet, past its volumes and sandbox (as the journey decides it), running.
func progress(p *corev1.Pod) int {
	switch {
	case p.Status.Phase == corev1.PodRunning:
		return 4
	case journey.PastSandbox(p):
		return 3
	case len(p.Status.InitContainerStatuses)+len(p.Status.ContainerStatuses) > 0:
		return 2
	case p.Spec.NodeName != "":
		return 1
	}
	return 0
}

// Ready reports a Running Pod whose Ready condition is true.
func Ready(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Unschedulable reports a Pod the scheduler has tried and found no node for.
func Unschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// EventsFor lists events about objects of a kind whose name starts with prefix.
func EventsFor(ctx context.Context, kc kubernetes.Interface, ns, kind, prefix string) ([]corev1.Event, error) {
	opts := metav1.ListOptions{}
	if kind != "" {
		opts.FieldSelector = fields.OneTermEqualSelector("involvedObject.kind", kind).String()
	}
	el, err := kc.CoreV1().Events(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	var out []corev1.Event
	for _, e := range el.Items {
		if strings.HasPrefix(e.InvolvedObject.Name, prefix) {
			out = append(out, e)
		}
	}
	return out, nil
}

// NodeLeases maps each node to when its kubelet last renewed its lease in kube-node-lease.
func NodeLeases(ctx context.Context, kc kubernetes.Interface) (map[string]time.Time, error) {
	ll, err := kc.CoordinationV1().Leases(corev1.NamespaceNodeLease).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the node leases: %w", err)
	}
	renewed := map[string]time.Time{}
	for _, l := range ll.Items {
		if l.Spec.RenewTime != nil {
			renewed[l.Name] = l.Spec.RenewTime.Time
		}
	}
	return renewed, nil
}

// Unheard says whether a node's kubelet runs but its status is stale: the node controller marked it Unknown
// (no status and no lease renewal within its grace period, as while the API server was down), yet the kubelet
// renewed its lease afterwards. Such a kubelet reposts its status only once its own copy of the node shows the
// change, which after an API server restart took 70-90 s here; a kubelet restarted posts at once.
func Unheard(n corev1.Node, renewed time.Time) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionUnknown && renewed.After(c.LastTransitionTime.Time)
		}
	}
	return false
}
