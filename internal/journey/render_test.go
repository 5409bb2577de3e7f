package journey

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name string
		in   Evidence
		want string
	}{
		{
			name: "stopped at scheduling",
			in: Evidence{Pod: healthyPod(unscheduled), Events: []corev1.Event{
				podEvent("FailedScheduling", "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }.", 0),
			}},
			want: `kubectl
  ✓ authentication
  ✓ authorization (RBAC)
  ✓ admission (mutating, validating)
  ✓ persistence (API server, etcd)
  ✓ controllers (controller-manager)  created by ReplicaSet web-7d9c
  ✗ scheduling (filter, score, bind)  FailedScheduling: 0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }.
      the scheduler found no node for the Pod
      try: kubectl describe pod <pod> -n <namespace>
      try: kubectl describe nodes | grep -A3 -i taints
      try: kubectl -n kube-system get pods -l component=kube-scheduler
  · kubelet                           not reached
  · runtime (CRI, image pull)         not reached
  · network (CNI)                     not reached
  · storage (CSI, volumes)            not reached
  · init containers                   not reached
  · app container                     not reached
  · readiness                         not reached
  · service (endpoints, DNS)          not reached
Running + Ready (not reached)
`,
		},
		{
			name: "whole journey passed",
			in:   Evidence{Node: readyNode(), Pod: healthyPod(), Service: &ServiceInfo{Name: "web", ReadyEndpoints: 2}},
			want: `kubectl
  ✓ authentication
  ✓ authorization (RBAC)
  ✓ admission (mutating, validating)
  ✓ persistence (API server, etcd)
  ✓ controllers (controller-manager)  created by ReplicaSet web-7d9c
  ✓ scheduling (filter, score, bind)  bound to worker
  ✓ kubelet
  ✓ runtime (CRI, image pull)
  ✓ network (CNI)
  ✓ storage (CSI, volumes)
  · init containers                   skipped: no init containers
  ✓ app container
  ✓ readiness
  ✓ service (endpoints, DNS)          Service web has 2 ready endpoint(s)
Running + Ready
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			Render(&buf, Trace(tc.in), false)
			if got := buf.String(); got != tc.want {
				t.Errorf("Render() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestRenderColour(t *testing.T) {
	r := Trace(Evidence{Pod: healthyPod(unscheduled)})
	var plain, coloured bytes.Buffer
	Render(&plain, r, false)
	Render(&coloured, r, true)
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("plain output contains ANSI escapes")
	}
	for _, code := range []string{"\x1b[32m", "\x1b[31;1m", "\x1b[2m", "\x1b[33m"} {
		if !strings.Contains(coloured.String(), code) {
			t.Errorf("coloured output lacks %q", code)
		}
	}
}

func TestRenderNoPodJourney(t *testing.T) {
	var r Result
	for _, s := range Stages() {
		st := Passed
		if s.Index() >= Scheduling.Index() {
			st = Skipped
		}
		r.Handoffs = append(r.Handoffs, Handoff{Stage: s, Status: st})
	}
	var b strings.Builder
	Render(&b, r, false)
	if !strings.HasSuffix(b.String(), "request accepted (no Pod in this task)\n") || strings.Contains(b.String(), "Running + Ready") {
		t.Errorf("a journey without a Pod must not end Running + Ready:\n%s", b.String())
	}
}
