package grader

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestProbePortResolvesNamedPorts(t *testing.T) {
	ctr := &corev1.Container{Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}}}
	cases := []struct {
		probe *corev1.Probe
		want  int32
	}{
		{&corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}}, 80},
		{&corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("http")}}}, 80},
		{&corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("web")}}}, 0},
		{&corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}, 0},
		{nil, 0},
	}
	for _, c := range cases {
		ctr.ReadinessProbe = c.probe
		if got, how := probePort(ctr, "readiness"); got != c.want {
			t.Errorf("probePort(%+v) = %d (%s), want %d", c.probe, got, how, c.want)
		}
	}
}
