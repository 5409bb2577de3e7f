package cluster

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cka-lab/lab/internal/kube"
)

// maxSandboxRetries bounds how often one workload's Pods are replaced on one node, so a sandbox that fails for
// good is left to the kubelet's own retries and WaitReady's error instead of being replaced forever. Counted
// per node: the control plane's network comes up first and may use up a workload-wide count (seen: CoreDNS's
// three replacements all spent there, its Pod on the worker then waited out two kubelet back-offs, 24 s).
const maxSandboxRetries = 3

// retryKey is one workload's Pods on one node.
type retryKey struct {
	owner types.UID
	node  string
}

// retrySandboxes replaces system Pods whose sandbox failed while their node's network was still coming up (the
// CNI agent may write its config before it knows the node's Pod range: "no IP ranges specified"), once every
// DaemonSet Pod on that node is Ready. The kubelet would retry such a Pod only after its pod-worker back-off
// of 10-15 s, twice in a row on a cold create; the Pod's controller replaces a deleted one at once. It looks
// once a second until ctx ends or timeout passes: reacting to every change instead (a watch) replaced Pods
// while the new network was still settling ("could not set bridge's mac") and used up their retries.
func (c *Cluster) retrySandboxes(ctx context.Context, timeout time.Duration) {
	retries := map[retryKey]int{}
	_ = kube.Poll(ctx, time.Second, timeout, func(ctx context.Context) (bool, error) {
		pl, err := c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready := agentsReady(pl.Items)
		for _, ns := range systemNamespaces {
			// A deleted Pod is gone or carries a DeletionTimestamp on the next look, which waitingForSandbox
			// rejects: only the count per workload and node needs remembering.
			var candidates []*corev1.Pod
			for i := range pl.Items {
				pod := &pl.Items[i]
				owner := metav1.GetControllerOf(pod)
				if pod.Namespace == ns && owner != nil && owner.Kind == "ReplicaSet" &&
					retries[retryKey{owner.UID, pod.Spec.NodeName}] < maxSandboxRetries &&
					waitingForSandbox(pod) && ready[pod.Spec.NodeName] {
					candidates = append(candidates, pod)
				}
			}
			if len(candidates) == 0 {
				continue
			}
			ev, err := c.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sandboxFailed.String()})
			if err != nil {
				continue
			}
			failed := map[types.UID]bool{}
			for _, e := range ev.Items {
				failed[e.InvolvedObject.UID] = true
			}
			for _, pod := range candidates {
				if !failed[pod.UID] {
					continue
				}
				err := c.Kube.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}})
				if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
					retries[retryKey{metav1.GetControllerOf(pod).UID, pod.Spec.NodeName}]++
				}
			}
		}
		return false, nil
	})
}

// sandboxFailed selects the kubelet's events for a Pod sandbox it could not create.
var sandboxFailed = fields.OneTermEqualSelector("reason", "FailedCreatePodSandBox")

// waitingForSandbox: the Pod is on a node, has not started, and its sandbox is not up.
func waitingForSandbox(pod *corev1.Pod) bool {
	if pod.Spec.NodeName == "" || pod.Spec.HostNetwork || pod.Status.Phase != corev1.PodPending || pod.DeletionTimestamp != nil {
		return false
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReadyToStartContainers && cond.Status == corev1.ConditionTrue {
			return false
		}
	}
	return true
}

// agentsReady says, per node, whether it runs DaemonSet Pods (the CNI agent and kube-proxy, whatever the CNI)
// and every one of them is Ready, so a new sandbox there should get its network.
func agentsReady(pods []corev1.Pod) map[string]bool {
	ready := map[string]bool{}
	seen := map[string]bool{}
	for i := range pods {
		p := &pods[i]
		if owner := metav1.GetControllerOf(p); owner == nil || owner.Kind != "DaemonSet" || p.Spec.NodeName == "" {
			continue
		}
		n := p.Spec.NodeName
		ready[n] = PodReady(p) && (ready[n] || !seen[n])
		seen[n] = true
	}
	return ready
}
