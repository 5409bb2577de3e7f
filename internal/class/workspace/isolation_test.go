package workspace

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/manifest"
	"github.com/cka-lab/lab/scenarios"
)

func isolationOf(t *testing.T, ids ...string) Isolation {
	t.Helper()
	cat, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	iso, err := IsolationFor(cat, ids, 7)
	if err != nil {
		t.Fatal(err)
	}
	return iso
}

// TestPodSecurityFollowsTheScenarios: nginx:1.27 runs as root, so bad-image-tag needs baseline; a scenario
// about Pod Security gets the level its namespace declares; Pods that set the restricted fields pass restricted.
func TestPodSecurityFollowsTheScenarios(t *testing.T) {
	iso := isolationOf(t, "bad-image-tag")
	if iso.PodSecurity != psapi.LevelBaseline || !strings.Contains(iso.Why, "bad-image-tag (Deployment ") {
		t.Errorf("bad-image-tag: %s (%s), want baseline naming its Deployment", iso.PodSecurity, iso.Why)
	}
	if iso = isolationOf(t, "psa-privileged-pod"); iso.PodSecurity != psapi.LevelBaseline || !strings.Contains(iso.Why, "its namespace enforces baseline") {
		t.Errorf("psa-privileged-pod: %s (%s), want the baseline its namespace declares", iso.PodSecurity, iso.Why)
	}

	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	level := func(podSpec string) (psapi.Level, error) {
		objs, err := manifest.Decode([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n    spec:\n" + podSpec))
		if err != nil {
			t.Fatal(err)
		}
		l, _, err := podSecurityOf(eval, "test", objs)
		return l, err
	}
	restricted := `      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: c
        image: busybox:1.36
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`
	if l, err := level(restricted); err != nil || l != psapi.LevelRestricted {
		t.Errorf("a restricted Pod: %s, %v", l, err)
	}
	if _, err := level("      containers:\n      - {name: c, image: busybox:1.36, securityContext: {privileged: true}}\n"); err == nil ||
		!strings.Contains(err.Error(), "Pod Security baseline refuses") {
		t.Errorf("a privileged Pod without a declared level: %v, want it refused", err)
	}
}

// TestQuotaIsSizedFromTheScenarios: the quota holds twice what the class's biggest scenario runs (and at
// least the floor), and the default limit is never below a request a scenario makes without a limit.
func TestQuotaIsSizedFromTheScenarios(t *testing.T) {
	small := isolationOf(t, "bad-image-tag")
	for name, floor := range quotaFloor {
		if got := small.Quota[name]; got.Cmp(floor) != 0 {
			t.Errorf("bad-image-tag quota %s = %s, want the floor %s", name, got.String(), floor.String())
		}
	}
	if got := small.Quota[corev1.ResourceServicesNodePorts]; !got.IsZero() {
		t.Errorf("nodeports = %s, want 0 for scenarios without a NodePort Service", got.String())
	}

	big := isolationOf(t, "bad-image-tag", "requests-exceed-allocatable")
	cat, _ := scenarios.Builtin()
	sc, _ := cat.Get("requests-exceed-allocatable")
	values, err := sc.Choose(7, exam.Nodeless{})
	if err != nil {
		t.Fatal(err)
	}
	cpu := resource.MustParse(values["cpu"])
	if got := big.Quota[corev1.ResourceRequestsCPU]; got.Cmp(cpu) <= 0 {
		t.Errorf("requests.cpu = %s, which does not admit the scenario's Pod requesting %s", got.String(), cpu.String())
	}
	if got := big.DefaultLimit[corev1.ResourceCPU]; got.Cmp(cpu) < 0 {
		t.Errorf("default cpu limit %s is below the %s a container requests without a limit", got.String(), cpu.String())
	}

	withQuota := isolationOf(t, "quota-refuses-pods")
	if got, floor := withQuota.Quota[corev1.ResourceRequestsCPU], quotaFloor[corev1.ResourceRequestsCPU]; got.Cmp(floor) <= 0 {
		t.Errorf("quota-refuses-pods: requests.cpu %s, want above the floor: the scenario's own quota may be raised by its fix", got.String())
	}
}

// TestNetworkPoliciesLeaveScenarioPoliciesAlone: lab admits the namespace's own Pods only where no scenario's
// NetworkPolicy decides that, since policies add up.
func TestNetworkPoliciesLeaveScenarioPoliciesAlone(t *testing.T) {
	for _, c := range []struct {
		ids                []string
		podTraffic, egress bool
	}{
		{[]string{"bad-image-tag"}, true, true},
		{[]string{"bad-image-tag", "netpol-allow-wrong-port"}, false, true},
		{[]string{"netpol-egress-blocks-dns"}, false, false},
	} {
		iso := isolationOf(t, c.ids...)
		if iso.PodTraffic != c.podTraffic || iso.Egress != c.egress {
			t.Errorf("%v: own Pods admitted %t, egress confined %t; want %t, %t", c.ids, iso.PodTraffic, iso.Egress, c.podTraffic, c.egress)
		}
	}
}

// TestProvisionIsolatesTheNamespace provisions a learner and reads back what the namespace holds.
func TestProvisionIsolatesTheNamespace(t *testing.T) {
	p, kc := newFake()
	ctx := context.Background()
	if _, err := p.Provision(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	ns, err := kc.CoreV1().Namespaces().Get(ctx, "lab-alice", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels[psapi.EnforceLevelLabel] != "baseline" || ns.Labels[psapi.EnforceVersionLabel] != "latest" {
		t.Errorf("namespace labels = %v, want Pod Security baseline enforced at latest", ns.Labels)
	}
	q, err := kc.CoreV1().ResourceQuotas("lab-alice").Get(ctx, quotaName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pods := q.Spec.Hard[corev1.ResourcePods]; pods.Value() != 10 {
		t.Errorf("quota pods = %s, want 10", pods.String())
	}
	lr, err := kc.CoreV1().LimitRanges("lab-alice").Get(ctx, limitRangeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := lr.Spec.Limits[0].DefaultRequest[corev1.ResourceMemory]; d.String() != "64Mi" {
		t.Errorf("default memory request = %s", d.String())
	}
	in, err := kc.NetworkingV1().NetworkPolicies("lab-alice").Get(ctx, ingressPolicy, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Spec.PodSelector.MatchLabels)+len(in.Spec.PodSelector.MatchExpressions) != 0 || len(in.Spec.Ingress) != 2 ||
		in.Spec.Ingress[0].From[0].PodSelector == nil || in.Spec.Ingress[0].From[0].NamespaceSelector != nil ||
		in.Spec.Ingress[1].From[0].IPBlock.CIDR != "172.18.0.2/32" {
		t.Errorf("ingress policy = %+v, want every Pod admitting its own namespace and the API server only", in.Spec)
	}
	eg, err := kc.NetworkingV1().NetworkPolicies("lab-alice").Get(ctx, egressPolicy, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(eg.Spec.Egress) != 2 || eg.Spec.Egress[1].To[0].NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != "kube-system" {
		t.Errorf("egress policy = %+v, want the namespace and kube-system's DNS", eg.Spec)
	}

	// A server resized for a class with NetworkPolicy scenarios replaces the policies of an earlier join.
	p.Isolation.PodTraffic, p.Isolation.Egress = false, false
	if _, err := p.Provision(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if in, err = kc.NetworkingV1().NetworkPolicies("lab-alice").Get(ctx, ingressPolicy, metav1.GetOptions{}); err != nil || len(in.Spec.Ingress) != 1 {
		t.Errorf("ingress policy after rejoining = %+v, %v; want the API server's rule only", in, err)
	}
	if _, err := kc.NetworkingV1().NetworkPolicies("lab-alice").Get(ctx, egressPolicy, metav1.GetOptions{}); err == nil {
		t.Error("the egress policy stayed in a class whose scenarios bring their own")
	}
}
