package injector

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cka-lab/lab/internal/kube"
)

// A scheduler that has not yet seen the taint places the first probes; the barrier removes them and returns
// only once a probe is turned away, leaving no probe behind.
func TestSchedulerRepelsWaitsOutAStaleScheduler(t *testing.T) {
	cs := fake.NewClientset()
	created := 0
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).DeepCopy()
		created++
		p.Name, p.Namespace = fmt.Sprintf("probe-%d", created), a.GetNamespace()
		if created < 3 {
			p.Spec.NodeName = "worker"
		} else {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
		}
		return true, p, cs.Tracker().Add(p)
	})
	before := []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	i := New(Env{Clients: &kube.Clients{Kube: cs}}, nil)
	if err := i.schedulerRepels(context.Background(), "worker", before); err != nil {
		t.Fatal(err)
	}
	if created != 3 {
		t.Errorf("created %d probes, want 3 (two placed by the stale scheduler, one turned away)", created)
	}
	left, err := cs.CoreV1().Pods(metav1.NamespaceSystem).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 0 {
		t.Errorf("%d probe Pods left behind", len(left.Items))
	}
}

// The probe tolerates exactly the taints the node had before, so only the new taint or the cordon can turn it
// away, and only the node can take it.
func TestSchedulerProbeToleratesThePriorTaints(t *testing.T) {
	p := schedulerProbe("worker", []corev1.Taint{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoExecute}})
	want := corev1.Toleration{Key: "team", Operator: corev1.TolerationOpEqual, Value: "a", Effect: corev1.TaintEffectNoExecute}
	if len(p.Spec.Tolerations) != 1 || p.Spec.Tolerations[0] != want {
		t.Errorf("tolerations %v, want [%v]", p.Spec.Tolerations, want)
	}
	terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || terms[0].MatchFields[0].Values[0] != "worker" {
		t.Errorf("node affinity %v does not pin the probe to worker", terms)
	}
}
