package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
