package injector

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/cka-lab/lab/scenarios"
)

// updateNode records the node's labels, taints and schedulability, then applies change to it.
func (i *Injector) updateNode(ctx context.Context, name string, change func(*corev1.Node)) error {
	nodes := i.env.Clients.Kube.CoreV1().Nodes()
	n, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read node %s: %w", name, err)
	}
	if err := i.ledger.Record(Entry{Node: &NodePrior{
		Name: name, Labels: maps.Clone(n.Labels), Taints: slices.Clone(n.Spec.Taints), Unschedulable: n.Spec.Unschedulable,
	}}); err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(n)
		_, err = nodes.Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
}

// taint adds the taint; a NoSchedule or NoExecute one is then known to repel Pods from the node.
func (i *Injector) taint(ctx context.Context, t *scenarios.TaintFault) error {
	var others []corev1.Taint
	err := i.updateNode(ctx, t.Node, func(n *corev1.Node) {
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(x corev1.Taint) bool {
			return x.Key == t.Key && string(x.Effect) == t.Effect
		})
		others = slices.Clone(n.Spec.Taints)
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	})
	if err != nil || corev1.TaintEffect(t.Effect) == corev1.TaintEffectPreferNoSchedule {
		return err
	}
	return i.schedulerRepels(ctx, t.Node, others)
}

func (i *Injector) label(ctx context.Context, l *scenarios.LabelFault) error {
	return i.updateNode(ctx, l.Node, func(n *corev1.Node) {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		maps.Copy(n.Labels, l.Set)
		for _, k := range l.Remove {
			delete(n.Labels, k)
		}
	})
}

// cordon marks the node unschedulable; the scheduler is then known to repel Pods from it.
func (i *Injector) cordon(ctx context.Context, node string) error {
	var before []corev1.Taint
	err := i.updateNode(ctx, node, func(n *corev1.Node) {
		before = slices.Clone(n.Spec.Taints)
		n.Spec.Unschedulable = true
	})
	if err != nil {
		return err
	}
	return i.schedulerRepels(ctx, node, before)
}

// revertNode puts back the node's labels, taints and schedulability exactly as recorded, which also undoes
// what a learner added (a label for a nodeSelector, a removed taint) during the attempt.
func (i *Injector) revertNode(ctx context.Context, p *NodePrior) error {
	nodes := i.env.Clients.Kube.CoreV1().Nodes()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Labels, n.Spec.Taints, n.Spec.Unschedulable = p.Labels, p.Taints, p.Unschedulable
		_, err = nodes.Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
}
