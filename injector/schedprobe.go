package injector

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/internal/journey/evidence"
	"github.com/cka-lab/lab/internal/kube"
)

// schedulerSync bounds the wait for the scheduler to act on a node update.
const schedulerSync = 30 * time.Second

// schedulerRepels returns once the scheduler has turned away, from node, a probe Pod that tolerates the taints
// the node had before the fault. The API server has the node update as soon as it answers, the scheduler only
// once its watch delivers it: a scenario's Pod created in between was scheduled onto the tainted node on a
// loaded machine (CI, taint-dedicated-node), and the symptom never came. A probe that the scheduler placed
// anyway saw the stale node; it is removed and the next one tried.
func (i *Injector) schedulerRepels(ctx context.Context, node string, before []corev1.Taint) error {
	pods := i.env.Clients.Kube.CoreV1().Pods(metav1.NamespaceSystem)
	var last string
	err := kube.Poll(ctx, 100*time.Millisecond, schedulerSync, func(ctx context.Context) (bool, error) {
		if last != "" {
			p, err := pods.Get(ctx, last, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			if p.Spec.NodeName == "" && !evidence.Unschedulable(p) {
				return false, nil
			}
			if err := i.removeProbe(ctx, last); err != nil {
				return false, err
			}
			if p.Spec.NodeName == "" {
				return true, nil
			}
		}
		p, err := pods.Create(ctx, schedulerProbe(node, before), metav1.CreateOptions{})
		if err != nil {
			return false, fmt.Errorf("create a scheduler probe Pod: %w", err)
		}
		last = p.Name
		return false, nil
	})
	if err != nil {
		if last != "" {
			_ = i.removeProbe(context.WithoutCancel(ctx), last)
		}
		return fmt.Errorf("the scheduler did not start repelling Pods from %s within %s: %w", node, schedulerSync, err)
	}
	return nil
}

func (i *Injector) removeProbe(ctx context.Context, name string) error {
	zero := int64(0)
	err := i.env.Clients.Kube.CoreV1().Pods(metav1.NamespaceSystem).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove scheduler probe Pod %s: %w", name, err)
	}
	return nil
}

// schedulerProbe is a Pod that only node can take, as long as the node has no taint beyond before and is
// schedulable.
func schedulerProbe(node string, before []corev1.Taint) *corev1.Pod {
	tolerations := make([]corev1.Toleration, 0, len(before))
	for _, t := range before {
		tolerations = append(tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect})
	}
	zero := int64(0)
	no := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "lab-scheduler-probe-",
			Labels:       map[string]string{"app.kubernetes.io/managed-by": "lab"},
		},
		Spec: corev1.PodSpec{
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
				}}},
			}},
			Tolerations:                   tolerations,
			TerminationGracePeriodSeconds: &zero,
			AutomountServiceAccountToken:  &no,
			Containers:                    []corev1.Container{{Name: "probe", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}
