package injector

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/cka-lab/lab/internal/kube"
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

func (i *Injector) taint(ctx context.Context, t *scenarios.TaintFault) error {
	return i.updateNode(ctx, t.Node, func(n *corev1.Node) {
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(x corev1.Taint) bool {
			return x.Key == t.Key && string(x.Effect) == t.Effect
		})
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	})
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

// cordonSeen bounds the wait for the node controller's echo of a cordon.
const cordonSeen = 20 * time.Second

// cordon marks the node unschedulable and waits until the node controller has tainted it
// node.kubernetes.io/unschedulable. The scheduler gets the same node update from the API server, so by the time
// the controller has reacted to it the scheduler has almost always applied it too: a Pod applied right after a
// bare update was seen scheduled onto the cordoned node on a loaded machine.
func (i *Injector) cordon(ctx context.Context, node string) error {
	if err := i.updateNode(ctx, node, func(n *corev1.Node) { n.Spec.Unschedulable = true }); err != nil {
		return err
	}
	nodes := i.env.Clients.Kube.CoreV1().Nodes()
	err := kube.Poll(ctx, 200*time.Millisecond, cordonSeen, func(ctx context.Context) (bool, error) {
		n, err := nodes.Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == corev1.TaintNodeUnschedulable
		}), nil
	})
	if err != nil {
		return fmt.Errorf("cordon %s: the node controller did not taint it unschedulable within %s: %w", node, cordonSeen, err)
	}
	return nil
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
