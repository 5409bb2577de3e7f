package grader

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestToleratedByMatchesAsTheScheduler(t *testing.T) {
	dedicated := corev1.Taint{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}
	controlPlane := corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	cases := []struct {
		name             string
		ts               []corev1.Toleration
		dedicated, cpToo bool
	}{
		{"Equal with the value", []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule}}, true, false},
		{"Exists on the key", []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, true, false},
		{"any effect", []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "batch"}}, true, false},
		{"another value", []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}, false, false},
		{"tolerate everything", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, true, true},
	}
	for _, c := range cases {
		if got := toleratedBy(c.ts, dedicated); got != c.dedicated {
			t.Errorf("%s: tolerates %s = %v", c.name, dedicated.ToString(), got)
		}
		if got := toleratedBy(c.ts, controlPlane); got != c.cpToo {
			t.Errorf("%s: tolerates the control plane's taint = %v", c.name, got)
		}
	}
}
