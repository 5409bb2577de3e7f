package evidence

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func waiting(name, node, reason string) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	if reason != "-" {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}
	}
	return p
}

func ready(name string) corev1.Pod {
	p := waiting(name, "n1", "-")
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	return p
}

func succeeded(name string) corev1.Pod {
	p := waiting(name, "n1", "-")
	p.Status.Phase = corev1.PodSucceeded
	return p
}

func TestRepresentative(t *testing.T) {
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want string
	}{
		// The e2e flake: a sibling still mounting (a transient FailedMount) while the other reached the pull.
		{"the pull, not a sibling still creating", []corev1.Pod{waiting("a", "n1", "ContainerCreating"), waiting("b", "n1", "ErrImagePull")}, "b"},
		{"a not-Ready Pod over a Ready one", []corev1.Pod{ready("a"), waiting("b", "", "-")}, "b"},
		{"the first of equals", []corev1.Pod{waiting("a", "n1", "ImagePullBackOff"), waiting("b", "n1", "ErrImagePull")}, "a"},
		{"scheduled over unscheduled", []corev1.Pod{waiting("a", "", "-"), waiting("b", "n1", "-")}, "b"},
		{"all Ready: the first", []corev1.Pod{ready("a"), ready("b")}, "a"},
		{"a Job's completed Pod is done", []corev1.Pod{succeeded("a"), waiting("b", "n1", "ContainerCreating")}, "b"},
	} {
		if got := representative(tc.pods); got == nil || got.Name != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, got, tc.want)
		}
	}
	if representative(nil) != nil {
		t.Error("no Pods: want nil")
	}
}
