package grader

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/scenarios"
)

// The logs check reads the named container's log in a Ready Pod and says which command showed what; a Pod
// that is not Ready is not read. (The fake clientset answers every log request with "fake logs".)
func TestLogsReadsAReadyPodsContainer(t *testing.T) {
	pod := func(ready corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-0", Namespace: "ns"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
	}
	check := func(p *corev1.Pod, contains string) Result {
		env := Env{Clients: &kube.Clients{Kube: fake.NewClientset(p)}}
		return env.logs(context.Background(), &scenarios.LogsCheck{PodSelector: scenarios.PodSelector{Namespace: "ns", Name: "app-0"}, Container: "log-streamer", Contains: contains})
	}
	if r := check(pod(corev1.ConditionTrue), "fake logs"); !r.OK || !strings.Contains(r.Evidence, "kubectl -n ns logs app-0 -c log-streamer") {
		t.Errorf("a Ready Pod whose log has the text: %+v", r)
	}
	if r := check(pod(corev1.ConditionTrue), "served request"); r.OK || !strings.Contains(r.Evidence, `want "served request"`) {
		t.Errorf("a log without the text: %+v", r)
	}
	if r := check(pod(corev1.ConditionFalse), "fake logs"); r.OK || !strings.Contains(r.Evidence, "no Ready") {
		t.Errorf("a Pod that is not Ready: %+v", r)
	}
}
