package grader

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestProbePortResolvesNamedPorts(t *testing.T) {
	ctr := &corev1.Container{Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}}}
	cases := []struct {
		probe    *corev1.Probe
		want     int32
		wantType string
	}{
		{&corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80)}}}, 80, "http"},
		{&corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("http")}}}, 80, "http"},
		{&corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}}, 80, "tcp"},
		{&corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("web")}}}, 0, "tcp"},
		{&corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}, 0, "exec"},
		{nil, 0, ""},
	}
	for _, c := range cases {
		ctr.ReadinessProbe = c.probe
		if got, typ, _, how := probePort(ctr, "readiness"); got != c.want || typ != c.wantType {
			t.Errorf("probePort(%+v) = %d %s (%s), want %d %s", c.probe, got, typ, how, c.want, c.wantType)
		}
	}
}
