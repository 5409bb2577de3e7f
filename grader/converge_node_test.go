package grader

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/scenarios"
)

// systemctlShow is what `systemctl show kubelet containerd --timestamp=unix -p ...` prints on a kind node,
// followed by the probe script's manifest lines.
const systemctlShow = `NRestarts=0
Id=kubelet.service
ActiveState=active
SubState=running
ActiveEnterTimestamp=@1796415543

NRestarts=2
Id=containerd.service
ActiveState=inactive
SubState=dead
ActiveEnterTimestamp=@1796415492
Manifest=1796415499 /etc/kubernetes/manifests/kube-scheduler.yaml`

func TestParseNodeFacts(t *testing.T) {
	f, err := parseNodeFacts(systemctlShow)
	if err != nil {
		t.Fatal(err)
	}
	if f.kubelet.state != "active" || f.kubelet.sub != "running" || !f.kubelet.since.Equal(time.Unix(1796415543, 0)) {
		t.Errorf("kubelet: %+v", f.kubelet)
	}
	if f.containerd.state != "inactive" || f.containerd.restarts != 2 {
		t.Errorf("containerd: %+v", f.containerd)
	}
	if !f.manifests["/etc/kubernetes/manifests/kube-scheduler.yaml"].Equal(time.Unix(1796415499, 0)) {
		t.Errorf("manifests: %+v", f.manifests)
	}
	if _, err := parseNodeFacts("Failed to connect to bus"); err == nil {
		t.Error("output without the units' states is an error, not a node with no kubelet")
	}
}

func readyNode(status corev1.ConditionStatus, heartbeat time.Time) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "lab-worker"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: status, LastHeartbeatTime: metav1.NewTime(heartbeat)}}}}
}

func TestNodeWaiting(t *testing.T) {
	start := t0
	running := unitFacts{state: "active", sub: "running", since: t0.Add(-time.Hour)}
	facts := func(kubelet, containerd unitFacts) *nodeFacts {
		return &nodeFacts{kubelet: kubelet, containerd: containerd}
	}
	cases := []struct {
		name  string
		node  corev1.Node
		facts *nodeFacts
		first int
		now   time.Time
		want  string // substring of the waiting line, "" for none (settled or stuck)
	}{
		{name: "Ready, kubelet reported since it started", node: readyNode(corev1.ConditionTrue, t0.Add(-time.Minute)),
			facts: facts(running, running), now: start},
		{name: "kubelet restarted by the learner, not reported yet", node: readyNode(corev1.ConditionTrue, t0.Add(-time.Minute)),
			facts: facts(unitFacts{state: "active", sub: "running", since: t0.Add(-2 * time.Second)}, running), now: start,
			want: "kubelet not reporting yet"},
		{name: "kubelet restarted and reported Ready", node: readyNode(corev1.ConditionTrue, t0.Add(-time.Second)),
			facts: facts(unitFacts{state: "active", sub: "running", since: t0.Add(-2 * time.Second)}, running), now: start},
		{name: "kubelet restarted, silent past the grace", node: readyNode(corev1.ConditionFalse, t0.Add(-time.Minute)),
			facts: facts(unitFacts{state: "active", sub: "running", since: t0.Add(-nodeGrace - time.Second)}, running), now: start.Add(nodeGrace)},
		{name: "kubelet stopped, node NotReady: stuck at once", node: readyNode(corev1.ConditionUnknown, t0.Add(-time.Minute)),
			facts: facts(unitFacts{state: "inactive", sub: "dead", since: t0.Add(-time.Hour)}, running), now: start},
		{name: "kubelet stopped, node not yet marked NotReady", node: readyNode(corev1.ConditionTrue, t0.Add(-time.Minute)),
			facts: facts(unitFacts{state: "inactive", sub: "dead"}, running), now: start.Add(time.Second), want: "not marked NotReady yet"},
		{name: "kubelet crash-looping: stuck", node: readyNode(corev1.ConditionFalse, t0.Add(-time.Minute)),
			facts: facts(unitFacts{state: "activating", sub: "auto-restart", since: t0.Add(-time.Second), restarts: 7}, running), first: 7, now: start},
		{name: "kubelet restarted by systemd while the check watched: stuck", node: readyNode(corev1.ConditionFalse, t0.Add(-time.Minute)),
			facts: facts(unitFacts{state: "active", sub: "running", since: t0.Add(-time.Second), restarts: 9}, running), first: 7, now: start},
		{name: "containerd stopped: stuck", node: readyNode(corev1.ConditionFalse, t0.Add(-time.Minute)),
			facts: facts(running, unitFacts{state: "inactive", sub: "dead"}), now: start},
		{name: "containerd started by the learner, kubelet not reporting Ready yet", node: readyNode(corev1.ConditionFalse, t0.Add(-time.Minute)),
			facts: facts(running, unitFacts{state: "active", sub: "running", since: t0.Add(-3 * time.Second)}), now: start,
			want: "containerd restarted"},
		{name: "NotReady with both units up, within the grace", node: readyNode(corev1.ConditionFalse, t0.Add(-time.Minute)),
			facts: facts(running, running), now: start.Add(5 * time.Second), want: "kubelet not reporting Ready yet"},
		{name: "NotReady with both units up, past the grace", node: readyNode(corev1.ConditionFalse, t0.Add(-time.Minute)),
			facts: facts(running, running), now: start.Add(nodeGrace + time.Second)},
		{name: "not read from inside: NotReady within the grace", node: readyNode(corev1.ConditionFalse, t0.Add(-time.Minute)),
			now: start.Add(time.Second), want: "kubelet not reporting Ready yet"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := nodeWaiting(c.node, c.facts, c.first, start, c.now)
			switch {
			case c.want == "" && len(w) > 0:
				t.Errorf("waits for %q, want nothing", w[0].What)
			case c.want != "" && (len(w) == 0 || !strings.Contains(w[0].What, c.want)):
				t.Errorf("waits for %+v, want %q", w, c.want)
			}
		})
	}
}

func TestStaticPodWaiting(t *testing.T) {
	const manifest = "/etc/kubernetes/manifests/kube-scheduler.yaml"
	mirror := func(seen time.Time) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler-lab-control-plane", Namespace: "kube-system",
			CreationTimestamp: metav1.NewTime(seen.Add(time.Second)),
			Annotations:       map[string]string{"kubernetes.io/config.seen": seen.Format(time.RFC3339Nano)}}}
	}
	edited := t0.Add(-2 * time.Second)
	cases := []struct {
		name   string
		mirror *corev1.Pod
		now    time.Time
		want   string
	}{
		{"the kubelet made the Pod from the edited manifest", mirror(edited.Add(300 * time.Millisecond)), t0, ""},
		{"edited after the Pod was made", mirror(t0.Add(-time.Hour)), t0, "has not restarted it from its changed manifest"},
		{"no mirror Pod yet", nil, t0, "no mirror Pod yet"},
		{"a write that changed nothing the kubelet reads", mirror(t0.Add(-time.Hour)), edited.Add(manifestCheck + probeSlack), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := staticPodWaiting(manifest, edited.Truncate(time.Second), c.mirror, "lab-control-plane", c.now)
			switch {
			case c.want == "" && len(w) > 0:
				t.Errorf("waits for %q, want nothing", w[0].What)
			case c.want != "" && (len(w) == 0 || !strings.Contains(w[0].What, c.want)):
				t.Errorf("waits for %+v, want %q", w, c.want)
			}
		})
	}
}

func controlPod(component string, started time.Time) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: component + "-lab-control-plane", Namespace: "kube-system", UID: types.UID(component),
		Labels: map[string]string{"component": component, "tier": "control-plane"}},
		Spec: corev1.PodSpec{NodeName: "lab-control-plane", Containers: []corev1.Container{{Name: component}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: component, Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}}}}}
}

func leaderLease(name string, acquired time.Time) *coordinationv1.Lease {
	d := int32(15)
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		Spec: coordinationv1.LeaseSpec{AcquireTime: &metav1.MicroTime{Time: acquired}, RenewTime: &metav1.MicroTime{Time: t0}, LeaseDurationSeconds: &d}}
}

func TestLeadSince(t *testing.T) {
	const kcm = "kube-controller-manager"
	cases := []struct {
		name  string
		pod   *corev1.Pod
		lease *coordinationv1.Lease
		now   time.Time
		want  time.Time
	}{
		{"leading for long", controlPod(kcm, t0.Add(-time.Hour)), leaderLease(kcm, t0.Add(-time.Hour+time.Second)), t0, t0.Add(-time.Hour + time.Second)},
		{"restarted, leading since", controlPod(kcm, t0.Add(-5*time.Second)), leaderLease(kcm, t0.Add(-3*time.Second)), t0, t0.Add(-3 * time.Second)},
		{"restarted, the old process's lease not yet run out", controlPod(kcm, t0.Add(-5*time.Second)), leaderLease(kcm, t0.Add(-time.Hour)), t0, t0},
		{"restarted long ago and never led", controlPod(kcm, t0.Add(-time.Minute)), leaderLease(kcm, t0.Add(-time.Hour)), t0, time.Time{}},
		{"not running", nil, leaderLease(kcm, t0.Add(-time.Hour)), t0, time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := &view{leases: []coordinationv1.Lease{*c.lease}}
			if c.pod != nil {
				v.control = []corev1.Pod{*c.pod}
			}
			if got := v.leadSince(kcm, c.now); !got.Equal(c.want) {
				t.Errorf("leadSince = %v, want %v", got, c.want)
			}
		})
	}
}

// A controller-manager just restarted from its fixed manifest does not lead yet: the Deployment it has not
// observed is waited for, where before the restart it counted as stuck after the stall.
func TestObserveWaitsForARestartedControllerManager(t *testing.T) {
	const kcm = "kube-controller-manager"
	dep := deploymentNotObserved()
	q := Question{Checks: []Planned{
		{Check: scenarios.Check{Name: "ready", PodsReady: &scenarios.PodsReady{PodSelector: scenarios.PodSelector{Namespace: "shop", Selector: "app=web"}}}},
		{Check: scenarios.Check{Name: "manifest", NodeFile: &scenarios.NodeFileCheck{Node: "lab-control-plane", Path: manifestDir + kcm + ".yaml"}}},
	}}
	probe := func(_ context.Context, node string, manifests []string) (*nodeFacts, error) {
		up := unitFacts{state: "active", sub: "running", since: t0.Add(-time.Hour)}
		return &nodeFacts{kubelet: up, containerd: up, manifests: map[string]time.Time{manifests[0]: t0.Add(-20 * time.Second)}}, nil
	}
	cases := []struct {
		name  string
		kcm   *corev1.Pod
		lease *coordinationv1.Lease
		want  string
	}{
		{"restarted 5 s ago, the old lease still held", controlPod(kcm, t0.Add(-5*time.Second)), leaderLease(kcm, t0.Add(-time.Hour)), "has not observed the latest spec"},
		{"leading for long: the step stalled", controlPod(kcm, t0.Add(-time.Hour)), leaderLease(kcm, t0.Add(-time.Hour)), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mirror := c.kcm.DeepCopy()
			mirror.Annotations = map[string]string{"kubernetes.io/config.seen": t0.Add(-19 * time.Second).Format(time.RFC3339Nano)}
			kc := fake.NewClientset(dep, mirror, c.lease)
			env := Env{Clients: &kube.Clients{Kube: kc}}
			tg := targetsOf(q)
			var conv convergence
			var w []Waiting
			// The step was first seen well over a stall ago.
			for _, now := range []time.Time{t0.Add(-2 * stall), t0} {
				v, err := env.observe(context.Background(), tg, t0.Add(-2*stall), probe)
				if err != nil {
					t.Fatal(err)
				}
				conv.remember(v)
				w = conv.still(v.waiting(t0.Add(-2*stall), now), now)
			}
			switch {
			case c.want == "" && len(w) > 0:
				t.Errorf("waits for %q, want nothing", w[0].What)
			case c.want != "" && (len(w) == 0 || !strings.Contains(w[0].What, c.want)):
				t.Errorf("waits for %+v, want %q", w, c.want)
			}
		})
	}
}

func deploymentNotObserved() *appsv1.Deployment {
	two := int32(2)
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 1},
		Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
}

func TestTargetsProbeTheNodesChecksLookInside(t *testing.T) {
	q := Question{Checks: []Planned{
		{Check: scenarios.Check{Name: "manifest", NodeFile: &scenarios.NodeFileCheck{Node: "cp", Path: manifestDir + "kube-scheduler.yaml"}}},
		{Check: scenarios.Check{Name: "controllers", NodeExec: &scenarios.NodeExecCheck{Node: "cp",
			Command: []string{"grep", "-q", "-e", "-deployment-controller", manifestDir + "kube-controller-manager.yaml"}}}},
		{Check: scenarios.Check{Name: "kubelet", NodeReady: &scenarios.NodeReadyCheck{Node: "worker", Ready: true}}},
		{Check: scenarios.Check{Name: "taint", NodeTaint: &scenarios.NodeTaintCheck{Node: "other", Key: "k"}}},
	}}
	tg := targetsOf(q)
	if strings.Join(tg.probed, ",") != "cp,worker" {
		t.Errorf("probed %v, want cp and worker (a taint is read from the API server)", tg.probed)
	}
	if got := strings.Join(tg.manifests["cp"], ","); got != manifestDir+"kube-scheduler.yaml,"+manifestDir+"kube-controller-manager.yaml" {
		t.Errorf("manifests on cp: %s", got)
	}
	if len(tg.nodes) != 3 {
		t.Errorf("nodes %v", tg.nodes)
	}
}

func TestWaitsSumPerObject(t *testing.T) {
	var ws waits
	ws.add([]Waiting{{What: "deployment/web: 0 of 2 updated replicas Ready"}}, t0)
	ws.add([]Waiting{{What: "deployment/web: 1 of 2 updated replicas Ready"}, {What: "service/web: endpoints catching up (1 of 2 Ready Pods)"}}, t0.Add(time.Second))
	ws.add([]Waiting{{What: "deployment/web: 1 of 2 updated replicas Ready"}}, t0.Add(3*time.Second))
	got := ws.list()
	if len(got) != 2 || got[0].For != "deployment/web" || got[0].Seconds != 3 || got[1].For != "service/web" || got[1].Seconds != 1 {
		t.Errorf("waits %+v", got)
	}
	if got[0].Last != "deployment/web: 1 of 2 updated replicas Ready" {
		t.Errorf("last state %q", got[0].Last)
	}
}

// After the API server came back, a worker the checks do not name was marked Unknown and its kubelet renews
// its lease without reposting its status: its Pods show NotReady until it does, so it is waited for, within
// unheardWait of the marking.
func TestObserveWaitsForAnUnheardNode(t *testing.T) {
	q := Question{Checks: []Planned{{Check: scenarios.Check{Name: "ready",
		PodsReady: &scenarios.PodsReady{PodSelector: scenarios.PodSelector{Namespace: "shop", Selector: "app=web"}}}}}}
	marked := t0.Add(-30 * time.Second)
	node := readyNode(corev1.ConditionUnknown, t0.Add(-2*time.Minute))
	node.Status.Conditions[0].LastTransitionTime = metav1.NewTime(marked)
	cases := []struct {
		name    string
		renewed time.Time
		now     time.Time
		want    bool
	}{
		{"lease renewed after the marking", t0.Add(-5 * time.Second), t0, true},
		{"lease not renewed since: the kubelet is down, nothing to wait for", marked.Add(-time.Minute), t0, false},
		{"still unheard after unheardWait", t0.Add(-5 * time.Second), marked.Add(unheardWait), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			renew := metav1.NewMicroTime(c.renewed)
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node.Name, Namespace: corev1.NamespaceNodeLease},
				Spec: coordinationv1.LeaseSpec{RenewTime: &renew}}
			env := Env{Clients: &kube.Clients{Kube: fake.NewClientset(node.DeepCopy(), lease)}}
			v, err := env.observe(context.Background(), targetsOf(q), t0, nil)
			if err != nil {
				t.Fatal(err)
			}
			w := v.waiting(t0, c.now)
			got := len(w) == 1 && strings.Contains(w[0].What, "node lab-worker: kubelet alive")
			if got != c.want || (!c.want && len(w) > 0) {
				t.Errorf("waits for %+v, want waiting: %v", w, c.want)
			}
		})
	}
}

func TestFlagOfReadsTheManifestAsTheKubeletDoes(t *testing.T) {
	manifest := func(cmd string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-apiserver\nspec:\n  containers:\n  - name: kube-apiserver\n    command:\n" + cmd
	}
	cases := []struct {
		name, cmd, want string
		found           bool
	}{
		{"kubeadm's form", "    - kube-apiserver\n    - --etcd-servers=https://127.0.0.1:2379\n", "https://127.0.0.1:2379", true},
		{"quoted", "    - kube-apiserver\n    - \"--etcd-servers=https://127.0.0.1:2379\"\n", "https://127.0.0.1:2379", true},
		{"flow style, value apart", "      [kube-apiserver, --etcd-servers, 'https://localhost:2379']\n", "https://localhost:2379", true},
		{"the last one wins", "    - kube-apiserver\n    - --etcd-servers=https://10.0.0.1:2379\n    - --etcd-servers=https://127.0.0.1:2379\n", "https://127.0.0.1:2379", true},
		{"a longer flag is another flag", "    - kube-apiserver\n    - --etcd-servers-overrides=x\n", "", false},
	}
	for _, c := range cases {
		got, found, err := flagOf(manifest(c.cmd), "kube-apiserver", "etcd-servers")
		if err != nil || got != c.want || found != c.found {
			t.Errorf("%s: flagOf = %q, %v, %v; want %q, %v", c.name, got, found, err, c.want, c.found)
		}
	}
	if _, _, err := flagOf("spec: [", "kube-apiserver", "etcd-servers"); err == nil {
		t.Error("a manifest the kubelet cannot parse is an error")
	}
}

func TestFlagOKReadsEqualsOrAControllersList(t *testing.T) {
	etcd := &scenarios.RunningFlag{Flag: "etcd-servers", Equals: []string{"https://127.0.0.1:2379", "https://localhost:2379"}}
	kcm := &scenarios.RunningFlag{Flag: "controllers", Enables: "deployment-controller"}
	cases := []struct {
		name  string
		c     *scenarios.RunningFlag
		value string
		found bool
		want  bool
	}{
		{"one of the values", etcd, "https://localhost:2379", true, true},
		{"another value", etcd, "https://127.0.0.1:2380", true, false},
		{"unset, with values wanted", etcd, "", false, false},
		{"kubeadm's list", kcm, "*,bootstrapsigner,tokencleaner", true, true},
		{"switched off", kcm, "*,bootstrapsigner,tokencleaner,-deployment-controller", true, false},
		{"unset is every default controller", kcm, "", false, true},
	}
	for _, c := range cases {
		if got := flagOK(c.c, c.value, c.found); got != c.want {
			t.Errorf("%s: flagOK = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestConfigField(t *testing.T) {
	raw := []byte(`{"kubeletconfig":{"authentication":{"x509":{"clientCAFile":"/etc/kubernetes/pki/ca.crt"}},"maxPods":110}}`)
	for field, want := range map[string]string{"authentication.x509.clientCAFile": "/etc/kubernetes/pki/ca.crt", "maxPods": "110", "authentication.webhook.enabled": ""} {
		if got, err := configField(raw, field); err != nil || got != want {
			t.Errorf("configField(%s) = %q, %v; want %q", field, got, err, want)
		}
	}
}
