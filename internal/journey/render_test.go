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
      try: kubectl describe pod web -n default
      try: kubectl describe nodes | grep -A3 -i taints
      try: kubectl -n kube-system get pods -l component=kube-scheduler
  · kubelet (node)                    not reached
  · volumes (claim, attach, mount)    not reached
  · sandbox and network (CRI, CNI)    not reached
  · init containers (pull, run)       not reached
  · image pull (app containers)       not reached
  · container create and start        not reached
  · app container running             not reached
  · readiness (probes)                not reached
  · service (endpoints, ports)        not reached
  · network policy                    not reached
  · DNS (cluster names)               not reached
  · API access (ServiceAccount)       not reached
Running + Ready (not reached)
`,
		},
		{
			// The kubelet mounts volumes before it asks the runtime for a
			// sandbox: nothing after the volumes ran.
			name: "a missing Secret stops the volumes, before sandbox and image",
			in: Evidence{Node: readyNode(), Pod: healthyPod(creating), Events: []corev1.Event{
				podEvent("FailedMount", `MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found`, 0),
			}},
			want: `kubectl
  ✓ authentication
  ✓ authorization (RBAC)
  ✓ admission (mutating, validating)
  ✓ persistence (API server, etcd)
  ✓ controllers (controller-manager)  created by ReplicaSet web-7d9c
  ✓ scheduling (filter, score, bind)  bound to worker
  ✓ kubelet (node)
  ✗ volumes (claim, attach, mount)    FailedMount: MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found
      the kubelet could not attach or mount a volume
      try: kubectl describe pod web -n default   # Events: FailedMount
      try: kubectl get pvc,configmap,secret -n default
      try: kubectl describe pvc -n default; kubectl get storageclass
  · sandbox and network (CRI, CNI)    not reached
  · init containers (pull, run)       not reached
  · image pull (app containers)       not reached
  · container create and start        not reached
  · app container running             not reached
  · readiness (probes)                not reached
  · service (endpoints, ports)        not reached
  · network policy                    not reached
  · DNS (cluster names)               not reached
  · API access (ServiceAccount)       not reached
Running + Ready (not reached)
`,
		},
		{
			name: "a runtime that is down holds the volumes back",
			in:   Evidence{Node: node(corev1.ConditionFalse, "KubeletNotReady", "container runtime is down"), Pod: healthyPod(creating)},
			want: `kubectl
  ✓ authentication
  ✓ authorization (RBAC)
  ✓ admission (mutating, validating)
  ✓ persistence (API server, etcd)
  ✓ controllers (controller-manager)  created by ReplicaSet web-7d9c
  ✓ scheduling (filter, score, bind)  bound to worker
  ✓ kubelet (node)
  · volumes (claim, attach, mount)    not reached: the kubelet starts no Pod while the runtime is down
  ✗ sandbox and network (CRI, CNI)    node worker Ready=False (KubeletNotReady): container runtime is down
      node worker is NotReady: its container runtime is down
      try: kubectl describe pod web -n default   # Events: FailedCreatePodSandBox
      try: systemctl status containerd; crictl pods   # on the node
      try: ls /etc/cni/net.d /opt/cni/bin; journalctl -u kubelet | grep -i cni   # on the node
  · init containers (pull, run)       not reached
  · image pull (app containers)       not reached
  · container create and start        not reached
  · app container running             not reached
  · readiness (probes)                not reached
  · service (endpoints, ports)        not reached
  · network policy                    not reached
  · DNS (cluster names)               not reached
  · API access (ServiceAccount)       not reached
Running + Ready (not reached)
`,
		},
		{
			name: "whole journey passed",
			in:   Evidence{Node: readyNode(), Pod: healthyPod(), Service: &ServiceInfo{Name: "web", ReadyEndpoints: 2}, Traffic: &Traffic{DNS: DNSInfo{ClusterIP: "10.96.0.10", ReadyEndpoints: 2}}},
			want: `kubectl
  ✓ authentication
  ✓ authorization (RBAC)
  ✓ admission (mutating, validating)
  ✓ persistence (API server, etcd)
  ✓ controllers (controller-manager)  created by ReplicaSet web-7d9c
  ✓ scheduling (filter, score, bind)  bound to worker
  ✓ kubelet (node)
  ✓ volumes (claim, attach, mount)
  ✓ sandbox and network (CRI, CNI)
  · init containers (pull, run)       skipped: no init containers
  ✓ image pull (app containers)
  ✓ container create and start
  ✓ app container running
  ✓ readiness (probes)
  ✓ service (endpoints, ports)        Service web has 2 ready endpoint(s)
  ✓ network policy                    no NetworkPolicy selects the Pod
  ✓ DNS (cluster names)
  ✓ API access (ServiceAccount)       no refused API request in the containers' recent logs
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
