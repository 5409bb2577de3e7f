package grader

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/scenarios"
)

// tolerates reads the tolerations of a workload's Pod template (or a Pod's) and matches them against the
// taint as the scheduler does: {key: K, operator: Exists, effect: NoSchedule} tolerates K=V:NoSchedule as
// well as {key: K, value: V}. With Only, a toleration that also admits another taint found on a node (the
// control plane's, another team's) fails.
func (e Env) tolerates(ctx context.Context, c *scenarios.TolerationCheck) Result {
	spec, err := e.podSpec(ctx, c.Object)
	if err != nil {
		return e.fail("%v", err)
	}
	want := corev1.Taint{Key: c.Key, Value: c.Value, Effect: corev1.TaintEffect(c.Effect)}
	if !c.Only {
		if toleratedBy(spec.Tolerations, want) {
			return pass("the Pods of %s tolerate %s", c.Object, want.ToString())
		}
		return Result{Evidence: fmt.Sprintf("the Pods of %s do not tolerate %s (tolerations: %s)", c.Object, want.ToString(), describeTolerations(spec.Tolerations)),
			Stage: journey.Scheduling}
	}
	nodes, err := e.Clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return e.fail("list nodes: %v", err)
	}
	var also []string
	for _, n := range nodes.Items {
		for _, t := range n.Spec.Taints {
			if t.Key == want.Key && t.Value == want.Value && t.Effect == want.Effect {
				continue
			}
			if toleratedBy(spec.Tolerations, t) {
				also = append(also, fmt.Sprintf("%s on %s", t.ToString(), n.Name))
			}
		}
	}
	if len(also) > 0 {
		return Result{Evidence: fmt.Sprintf("the Pods of %s also tolerate %s: tolerate only %s", c.Object, strings.Join(also, ", "), want.ToString()),
			Stage: journey.Scheduling}
	}
	return pass("the Pods of %s tolerate no other taint in the cluster", c.Object)
}

func toleratedBy(ts []corev1.Toleration, taint corev1.Taint) bool {
	for _, t := range ts {
		if t.ToleratesTaint(klog.Background(), &taint, false) {
			return true
		}
	}
	return false
}

func describeTolerations(ts []corev1.Toleration) string {
	if len(ts) == 0 {
		return "none"
	}
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%s %s %s:%s", t.Key, t.Operator, t.Value, t.Effect))
	}
	return strings.Join(out, "; ")
}
