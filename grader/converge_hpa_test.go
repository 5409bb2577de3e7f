package grader

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAutoscalersWaitForMetricsOfNewPods(t *testing.T) {
	now := time.Now()
	hpa := autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	hpa.Status.Conditions = []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse, Reason: "FailedGetResourceMetric"}}
	readySince := func(ago time.Duration) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-ago))}}
		return p
	}
	v := &view{autoscalers: []autoscalingv2.HorizontalPodAutoscaler{hpa}, pods: []corev1.Pod{readySince(5 * time.Second)}}
	w := v.autoscalersWaiting(now)
	if len(w) != 1 || !w[0].Until.After(now.Add(30*time.Second)) {
		t.Fatalf("an autoscaler whose Pods became Ready 5 s ago: %+v, want a wait of about %s more", w, metricsWindow-5*time.Second)
	}
	v.pods = []corev1.Pod{readySince(time.Minute)}
	if w := (&convergence{}).still(v.autoscalersWaiting(now), now); len(w) != 0 {
		t.Errorf("an autoscaler whose Pods have been Ready for a minute is still waited for: %+v", w)
	}
	v.autoscalers[0].Status.Conditions[0].Status = corev1.ConditionTrue
	v.pods = []corev1.Pod{readySince(time.Second)}
	if w := v.autoscalersWaiting(now); len(w) != 0 {
		t.Errorf("an active autoscaler is waited for: %+v", w)
	}
}

// A new autoscaler is waited for until the controller's first sync could have computed it, even on Pods Ready
// long ago.
func TestNewAutoscalerWaitsForItsFirstSync(t *testing.T) {
	now := time.Now()
	hpa := autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", CreationTimestamp: metav1.NewTime(now.Add(-5 * time.Second))}}
	v := &view{autoscalers: []autoscalingv2.HorizontalPodAutoscaler{hpa}}
	w := (&convergence{}).still(v.autoscalersWaiting(now), now)
	if len(w) != 1 || !w[0].Until.Equal(hpa.CreationTimestamp.Add(firstSync)) {
		t.Fatalf("an autoscaler created 5 s ago: %+v, want a wait until %s after its creation", w, firstSync)
	}
	v.autoscalers[0].CreationTimestamp = metav1.NewTime(now.Add(-time.Minute))
	if w := (&convergence{}).still(v.autoscalersWaiting(now), now); len(w) != 0 {
		t.Errorf("an autoscaler created a minute ago with no condition is still waited for: %+v", w)
	}
}
