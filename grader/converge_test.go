package grader

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/scenarios"
)

var t0 = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

func pod(name string, mutate func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "lab-worker", Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "nginx", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(-time.Minute))}}}}},
	}
	if mutate != nil {
		mutate(&p)
	}
	return p
}

func notReady(p *corev1.Pod) {
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	p.Status.ContainerStatuses[0].Ready = false
}

func waitingIn(reason string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		notReady(p)
		p.Status.Phase = corev1.PodPending
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
	}
}

func TestPodWaiting(t *testing.T) {
	now := t0
	cases := []struct {
		name      string
		pod       corev1.Pod
		v         view
		wantWait  string // substring of the waiting line, "" for none
		wantStuck bool
	}{
		{name: "Ready", pod: pod("a", nil)},
		{name: "image pull back-off is stuck", pod: pod("a", waitingIn("ImagePullBackOff")), wantStuck: true},
		{name: "crash loop is stuck", pod: pod("a", waitingIn("CrashLoopBackOff")), wantStuck: true},
		{name: "being created", pod: pod("a", waitingIn("ContainerCreating")), wantWait: "containers being created"},
		{name: "being created on a node whose containerd is stopped is stuck", pod: pod("a", waitingIn("ContainerCreating")),
			v:         view{facts: map[string]*nodeFacts{"lab-worker": {kubelet: unitFacts{state: "active", sub: "running"}, containerd: unitFacts{state: "inactive", sub: "dead"}}}},
			wantStuck: true},
		{name: "being created on a node whose kubelet keeps exiting is stuck", pod: pod("a", waitingIn("ContainerCreating")),
			v:         view{facts: map[string]*nodeFacts{"lab-worker": {kubelet: unitFacts{state: "activating", sub: "auto-restart", restarts: 3}, containerd: unitFacts{state: "active", sub: "running"}}}},
			wantStuck: true},
		{name: "being created on a node whose units run", pod: pod("a", waitingIn("ContainerCreating")),
			v:        view{facts: map[string]*nodeFacts{"lab-worker": {kubelet: unitFacts{state: "active", sub: "running"}, containerd: unitFacts{state: "active", sub: "running"}}}},
			wantWait: "containers being created"},
		{name: "a missing Secret volume is stuck", pod: pod("a", func(p *corev1.Pod) {
			waitingIn("ContainerCreating")(p)
			p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls"}}}}
		}), wantStuck: true},
		{name: "a Secret created by the fix: the kubelet mounts it next", pod: pod("a", func(p *corev1.Pod) {
			waitingIn("ContainerCreating")(p)
			p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls"}}}}
		}), v: view{secrets: map[string]map[string]bool{"shop/tls": {"tls.crt": true}}}, wantWait: "being created"},
		{name: "a Running Pod whose sandbox the kubelet makes again", pod: pod("a", func(p *corev1.Pod) {
			waitingIn("ContainerCreating")(p)
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "ContainerStatusUnknown", ExitCode: 137}}
		}), wantWait: "containers being created"},
		{name: "a Running Pod whose new sandbox failed after the check began", pod: pod("a", func(p *corev1.Pod) {
			waitingIn("ContainerCreating")(p)
			p.Status.Phase = corev1.PodRunning
		}), v: view{sandboxFailed: map[string]string{"shop/a": "FailedCreatePodSandBox"}}, wantStuck: true},
		{name: "sandbox failed again after the check began", pod: pod("a", waitingIn("ContainerCreating")),
			v: view{sandboxFailed: map[string]string{"shop/a": "FailedCreatePodSandBox"}}, wantStuck: true},
		{name: "config error with the key still missing", pod: pod("a", func(p *corev1.Pod) {
			waitingIn("CreateContainerConfigError")(p)
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "mode"}}}}
		}), v: view{configMaps: map[string]map[string]bool{"shop/cfg": {"other": true}}}, wantStuck: true},
		{name: "config error fixed: the key exists now", pod: pod("a", func(p *corev1.Pod) {
			waitingIn("CreateContainerConfigError")(p)
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "mode"}}}}
		}), v: view{configMaps: map[string]map[string]bool{"shop/cfg": {"mode": true}}}, wantWait: "its configuration now exists"},
		{name: "readiness probe still within its window", pod: pod("a", func(p *corev1.Pod) {
			notReady(p)
			p.Status.ContainerStatuses[0].State.Running.StartedAt = metav1.NewTime(now.Add(-10 * time.Second))
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{InitialDelaySeconds: 15, PeriodSeconds: 5, FailureThreshold: 3}
		}), wantWait: "probes may still pass"},
		{name: "readiness probe failing past its window", pod: pod("a", func(p *corev1.Pod) {
			notReady(p)
			p.Status.ContainerStatuses[0].State.Running.StartedAt = metav1.NewTime(now.Add(-2 * time.Minute))
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{InitialDelaySeconds: 5, PeriodSeconds: 5, FailureThreshold: 3}
		}), wantStuck: true},
		{name: "marked NotReady by the node controller: the kubelet restores it", pod: pod("a", func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-20 * time.Second))},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}}
		}), wantWait: "marked NotReady"},
		{name: "marked NotReady long ago is stuck", pod: pod("a", func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-5 * time.Minute))},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}}
		}), wantStuck: true},
		{name: "an unmet readiness gate is not a node's mark", pod: pod("a", func(p *corev1.Pod) {
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}}
			p.Status.Conditions = []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-20 * time.Second))},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}}
		}), wantStuck: true},
		{name: "terminating within its grace period", pod: pod("a", func(p *corev1.Pod) {
			p.DeletionTimestamp = &metav1.Time{Time: now.Add(20 * time.Second)}
		}), wantWait: "terminating"},
		{name: "unschedulable", pod: pod("a", func(p *corev1.Pod) {
			p.Spec.NodeName = ""
			p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
				Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}
		}), wantStuck: true},
		{name: "not yet seen by the scheduler", pod: pod("a", func(p *corev1.Pod) {
			p.Spec.NodeName = ""
			p.Status = corev1.PodStatus{Phase: corev1.PodPending}
		}), wantWait: "waiting for the scheduler"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := c.v
			if v.configMaps == nil {
				v.configMaps = map[string]map[string]bool{}
			}
			if v.secrets == nil {
				v.secrets = map[string]map[string]bool{}
			}
			w, stuck := v.podWaiting(&c.pod, now.Add(-time.Second), now)
			if stuck != c.wantStuck {
				t.Errorf("stuck = %v, want %v (waiting %+v)", stuck, c.wantStuck, w)
			}
			switch {
			case c.wantWait == "" && len(w) > 0:
				t.Errorf("waits for %q, want nothing", w[0].What)
			case c.wantWait != "" && (len(w) == 0 || !strings.Contains(w[0].What, c.wantWait)):
				t.Errorf("waits for %+v, want %q", w, c.wantWait)
			}
		})
	}
}

func TestWaitingRolloutsEndpointsNodes(t *testing.T) {
	two := int32(2)
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	dep := func(mutate func(*appsv1.Deployment)) appsv1.Deployment {
		d := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 2},
			Spec:   appsv1.DeploymentSpec{Replicas: &two, Selector: sel},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}}
		mutate(&d)
		return d
	}
	ready := true
	slice := func(pods ...string) discoveryv1.EndpointSlice {
		s := discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-x", Namespace: "shop", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}}}
		for _, p := range pods {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: p}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
		}
		return s
	}
	svc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	node := func(status corev1.ConditionStatus) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "lab-worker"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}}
	}
	since := t0
	cases := []struct {
		name string
		v    view
		now  time.Time
		want string
	}{
		{name: "settled", v: view{pods: []corev1.Pod{pod("a", nil), pod("b", nil)}, deployments: []appsv1.Deployment{dep(func(*appsv1.Deployment) {})},
			services: []corev1.Service{svc}, slices: []discoveryv1.EndpointSlice{slice("a", "b")}}, now: since.Add(time.Second)},
		{name: "generation not observed", v: view{deployments: []appsv1.Deployment{dep(func(d *appsv1.Deployment) { d.Status.ObservedGeneration = 1 })}},
			now: since, want: "has not observed the latest spec"},
		{name: "rollout stuck on a Pod that cannot pull", v: view{pods: []corev1.Pod{pod("a", nil), pod("b", waitingIn("ImagePullBackOff"))},
			deployments: []appsv1.Deployment{dep(func(d *appsv1.Deployment) { d.Status.UpdatedReplicas, d.Status.ReadyReplicas = 1, 1 })}}, now: since},
		{name: "rollout between steps", v: view{pods: []corev1.Pod{pod("a", nil), pod("b", nil)},
			deployments: []appsv1.Deployment{dep(func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 })}}, now: since, want: "updated replicas Ready"},
		{name: "endpoints catching up", v: view{pods: []corev1.Pod{pod("a", nil), pod("b", nil)}, services: []corev1.Service{svc},
			slices: []discoveryv1.EndpointSlice{slice("a")}}, now: since, want: "endpoints catching up (1 of 2"},
		{name: "node NotReady right after a kubelet restart", v: view{nodes: []corev1.Node{node(corev1.ConditionFalse)}}, now: since.Add(5 * time.Second),
			want: "kubelet not reporting Ready yet"},
		{name: "node still NotReady after the grace", v: view{nodes: []corev1.Node{node(corev1.ConditionUnknown)}}, now: since.Add(nodeGrace + time.Second)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.v.configMaps, c.v.secrets = map[string]map[string]bool{}, map[string]map[string]bool{}
			w := c.v.waiting(since, c.now)
			switch {
			case c.want == "" && len(w) > 0:
				t.Errorf("waits for %q, want nothing", w[0].What)
			case c.want != "" && (len(w) == 0 || !strings.Contains(w[0].What, c.want)):
				t.Errorf("waits for %+v, want %q", w, c.want)
			}
		})
	}
}

func TestQuickStepsStopBeingWaitedFor(t *testing.T) {
	var c convergence
	w := []Waiting{{Key: "rs/shop/web|1/2", What: "replicaset/web: 1 of 2 Pods created", Quick: true}}
	if got := c.still(w, t0); len(got) != 1 {
		t.Fatal("a quick step just seen is waited for")
	}
	if got := c.still(w, t0.Add(stall/2)); len(got) != 1 {
		t.Fatal("a quick step within stall is waited for")
	}
	if got := c.still(w, t0.Add(stall+time.Second)); len(got) != 0 {
		t.Fatal("a quick step unchanged past stall is stuck")
	}
	moved := []Waiting{{Key: "rs/shop/web|2/3", Quick: true}}
	if got := c.still(moved, t0.Add(stall+2*time.Second)); len(got) != 1 {
		t.Fatal("a step that moved is waited for again")
	}
}

func TestTargetsOf(t *testing.T) {
	q := Question{Checks: []Planned{
		{Check: scenariosCheckPodsReady("shop")},
		{Check: scenariosCheckEndpoints("shop", "web")},
		{Check: scenariosCheckNodeFile("lab-worker")},
	}}
	tg := targetsOf(q)
	if len(tg.namespaces) != 1 || tg.namespaces[0] != "shop" || len(tg.services["shop"]) != 1 || len(tg.nodes) != 1 {
		t.Errorf("targets: %+v", tg)
	}
}

func scenariosCheckPodsReady(ns string) scenarios.Check {
	return scenarios.Check{Name: "ready", PodsReady: &scenarios.PodsReady{PodSelector: scenarios.PodSelector{Namespace: ns, Selector: "app=web"}}}
}

func scenariosCheckEndpoints(ns, svc string) scenarios.Check {
	return scenarios.Check{Name: "ep", Endpoints: &scenarios.EndpointsCheck{Namespace: ns, Service: svc, Ready: 1}}
}

func scenariosCheckNodeFile(node string) scenarios.Check {
	return scenarios.Check{Name: "file", NodeFile: &scenarios.NodeFileCheck{Node: node, Path: "/etc/x"}}
}
