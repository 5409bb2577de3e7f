package cluster

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestWaitingForSandbox(t *testing.T) {
	pending := func(edit func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "lab-control-plane"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
		if edit != nil {
			edit(p)
		}
		return p
	}
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"scheduled, no sandbox yet": {pending(nil), true},
		"sandbox not ready": {pending(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse}}
		}), true},
		"sandbox ready, containers starting": {pending(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue}}
		}), false},
		"not scheduled":    {pending(func(p *corev1.Pod) { p.Spec.NodeName = "" }), false},
		"host network":     {pending(func(p *corev1.Pod) { p.Spec.HostNetwork = true }), false},
		"running":          {pending(func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }), false},
		"already deleting": {pending(func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }), false},
	} {
		if got := waitingForSandbox(tc.pod); got != tc.want {
			t.Errorf("%s: waitingForSandbox = %v, want %v", name, got, tc.want)
		}
	}
}

func TestAgentsReady(t *testing.T) {
	pod := func(node, kind string, ready bool) corev1.Pod {
		p := corev1.Pod{Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		p.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: "x", Controller: ptr.To(true)}}
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		return p
	}
	got := agentsReady([]corev1.Pod{
		pod("a", "DaemonSet", true), pod("a", "DaemonSet", true), pod("a", "ReplicaSet", false),
		pod("b", "DaemonSet", true), pod("b", "DaemonSet", false),
		pod("c", "ReplicaSet", true),
		pod("d", "DaemonSet", false), pod("d", "DaemonSet", true),
	})
	want := map[string]bool{"a": true, "b": false, "d": false}
	if !maps.Equal(got, want) {
		t.Errorf("agentsReady = %v, want %v", got, want)
	}
}
