package cluster

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cka-lab/lab/kube"
)

// maxSandboxRetries bounds how often one workload's Pods are replaced, so a sandbox that fails for good is left
// to the kubelet's own retries and WaitReady's error instead of being replaced forever.
const maxSandboxRetries = 3

// retrySandboxes replaces system Pods whose sandbox failed while their node's network was still coming up (the
// CNI agent may write its config before it knows the node's Pod range: "no IP ranges specified"), once every
// DaemonSet Pod on that node is Ready. The kubelet would retry such a Pod only after its pod-worker back-off
// of 10-15 s, twice in a row on a cold create; the Pod's controller replaces a deleted one at once. It runs
// until ctx ends or timeout passes.
func (c *Cluster) retrySandboxes(ctx context.Context, timeout time.Duration) {
	retried := map[types.UID]bool{}
	perOwner := map[types.UID]int{}
	_ = kube.Poll(ctx, time.Second, timeout, func(ctx context.Context) (bool, error) {
		for _, ns := range systemNamespaces {
			pl, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			for i := range pl.Items {
				pod := &pl.Items[i]
				owner := metav1.GetControllerOf(pod)
				if retried[pod.UID] || owner == nil || owner.Kind != "ReplicaSet" || perOwner[owner.UID] >= maxSandboxRetries ||
					!waitingForSandbox(pod) {
					continue
				}
				if ok, err := c.sandboxFailedOnReadyNode(ctx, pod); err != nil || !ok {
					continue
				}
				err := c.Kube.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}})
				if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
					retried[pod.UID] = true
					perOwner[owner.UID]++
				}
			}
		}
		return false, nil
	})
}

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

// sandboxFailedOnReadyNode: the kubelet reported a failed sandbox for the Pod, and every DaemonSet Pod on its
// node (the CNI agent and kube-proxy, whatever the CNI) is Ready now, so a new try should succeed.
func (c *Cluster) sandboxFailedOnReadyNode(ctx context.Context, pod *corev1.Pod) (bool, error) {
	ev, err := c.Kube.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: fields.AndSelectors(
		fields.OneTermEqualSelector("involvedObject.uid", string(pod.UID)),
		fields.OneTermEqualSelector("reason", "FailedCreatePodSandBox"),
	).String()})
	if err != nil || len(ev.Items) == 0 {
		return false, err
	}
	pl, err := c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", pod.Spec.NodeName).String(),
	})
	if err != nil {
		return false, err
	}
	agents := 0
	for i := range pl.Items {
		if owner := metav1.GetControllerOf(&pl.Items[i]); owner == nil || owner.Kind != "DaemonSet" {
			continue
		}
		agents++
		if !PodReady(&pl.Items[i]) {
			return false, nil
		}
	}
	return agents > 0, nil
}
