package survive

import (
	"reflect"
	"testing"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/scenarios"
)

func instance(checks, collateral []scenarios.Check, faults ...scenarios.Fault) *scenarios.Instance {
	return &scenarios.Instance{Scenario: &scenarios.Scenario{ID: "s", Checks: checks, Collateral: collateral, Faults: faults}}
}

func sel(ns, s string) scenarios.PodSelector {
	return scenarios.PodSelector{Namespace: ns, Selector: s}
}

func TestChooseWorkloadPods(t *testing.T) {
	inst := instance([]scenarios.Check{
		{PodsReady: &scenarios.PodsReady{PodSelector: sel("shop", "app=web")}},
		{Endpoints: &scenarios.EndpointsCheck{Namespace: "shop", Service: "web"}},
		{Exec: &scenarios.ExecCheck{PodSelector: sel("billing", "app=api")}},
		// The cluster's own namespace: only the Pods a check selects, never all of it.
		{PodsReady: &scenarios.PodsReady{PodSelector: sel("kube-system", "k8s-app=kube-dns")}},
		{HTTP: &scenarios.HTTPCheck{Namespace: "kube-system", Service: "x"}},
		// A Pod named in full has no controller to bring it back.
		{PodState: &scenarios.PodState{PodSelector: scenarios.PodSelector{Namespace: "bare", Name: "p"}}},
		{NodeReady: &scenarios.NodeReadyCheck{Node: "w"}},
	}, []scenarios.Check{
		{Field: &scenarios.FieldCheck{Object: scenarios.ObjectRef{Namespace: "audit"}}},
	})
	got := Choose(inst)
	want := []Disturbance{{Kind: DeletePods, Pods: []PodSet{
		{Namespace: "audit"}, {Namespace: "billing", Selector: "app=api"},
		{Namespace: "kube-system", Selector: "k8s-app=kube-dns"}, {Namespace: "shop"},
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Choose = %+v, want %+v", got, want)
	}
	if s := got[0].String(); s != "delete the workloads' Pods in namespace audit, namespace billing (app=api), namespace kube-system (k8s-app=kube-dns), namespace shop" {
		t.Errorf("String = %q", s)
	}
}

func TestChooseNodeDisturbances(t *testing.T) {
	manifest := instance(nil, nil,
		scenarios.Fault{NodeFile: &scenarios.NodeFileFault{Node: "cp", Path: "/etc/kubernetes/manifests/kube-scheduler.yaml"}},
		scenarios.Fault{Custom: &scenarios.CustomFault{Custom: scenarios.Custom{Func: "staticPodManifest", Args: map[string]string{"node": "cp", "component": "kube-apiserver"}}}},
		// No node: an object in the API, which no restart disturbs.
		scenarios.Fault{Taint: &scenarios.TaintFault{Node: "w"}},
	)
	runtime := instance(nil, nil,
		scenarios.Fault{NodeService: &scenarios.NodeServiceFault{Node: "w", Unit: "containerd"}},
		scenarios.Fault{NodeFile: &scenarios.NodeFileFault{Node: "w", Path: "/etc/containerd/config.toml"}},
		scenarios.Fault{NodeFile: &scenarios.NodeFileFault{Node: "cp", Path: "/root/values.yaml"}},
	)
	got := Choose(manifest, runtime)
	want := []Disturbance{
		{Kind: RestartStaticPod, Node: "cp", Component: "kube-apiserver"},
		{Kind: RestartStaticPod, Node: "cp", Component: "kube-scheduler"},
		{Kind: RestartContainerd, Node: "w"},
		{Kind: RestartKubelet, Node: "cp"},
		{Kind: RestartKubelet, Node: "w"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Choose = %+v, want %+v", got, want)
	}
	var names []string
	for _, d := range got {
		names = append(names, d.String())
	}
	wantNames := []string{
		"restart the static Pod kube-apiserver on cp", "restart the static Pod kube-scheduler on cp",
		"restart containerd on w", "restart the kubelet on cp", "restart the kubelet on w",
	}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("names = %q, want %q", names, wantNames)
	}
}

func TestChooseBuiltinScenarios(t *testing.T) {
	cat, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	probe, err := cat.Get("readiness-probe-wrong-path")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := probe.WithValues(1, map[string]string{"ns": "media", "app": "web", "path": "/ready"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Choose(inst); len(got) != 1 || got[0].String() != "delete the workloads' Pods in namespace media" {
		t.Errorf("Choose(readiness-probe-wrong-path) = %+v", got)
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		s    grader.Survived
		want string
	}{
		{grader.Survived{Disturbance: "restart the kubelet on w", Undid: []string{}}, "restart the kubelet on w: the fix held"},
		{grader.Survived{Disturbance: "delete the workloads' Pods in namespace shop", Undid: []string{"2 Pods are Ready", `the Service "web" serves`}},
			`delete the workloads' Pods in namespace shop: undid "2 Pods are Ready", "the Service \"web\" serves"`},
	} {
		if got := Describe(tc.s); got != tc.want {
			t.Errorf("Describe = %s, want %s", got, tc.want)
		}
	}
}

func TestTasksPass(t *testing.T) {
	q := grader.QuestionOutcome{Checks: []grader.CheckOutcome{
		{Group: grader.GroupChecks, Passed: true}, {Group: grader.GroupCollateral, Passed: false},
	}}
	if !tasksPass(q) {
		t.Error("a failing collateral check does not stop the fix from being put to the test")
	}
	q.Checks[0].Passed = false
	if tasksPass(q) {
		t.Error("a failing task check: there is no fix to disturb")
	}
}

func TestChooseSysctl(t *testing.T) {
	profile := "# hardening\nnet.ipv4.ip_forward = 0\n-net.ipv4.conf.all.send_redirects=0\n; old\n\nnet.ipv4.ip_forward = 0\n"
	inst := instance(nil, nil,
		scenarios.Fault{NodeFile: &scenarios.NodeFileFault{Node: "w", Path: "/etc/sysctl.d/60-hardening.conf", Write: &profile}},
		scenarios.Fault{Custom: &scenarios.CustomFault{Custom: scenarios.Custom{Func: "sysctl", Args: map[string]string{"node": "w", "key": "net.ipv4.conf.all.forwarding", "value": "0"}}}},
	)
	got := Choose(inst)
	want := []Disturbance{
		{Kind: ReapplySysctl, Node: "w", Keys: []string{"net.ipv4.conf.all.forwarding", "net.ipv4.conf.all.send_redirects", "net.ipv4.ip_forward"}},
		{Kind: RestartKubelet, Node: "w"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Choose = %+v, want %+v", got, want)
	}
	if s := got[0].String(); s != "apply the boot-time sysctl settings of net.ipv4.conf.all.forwarding, net.ipv4.conf.all.send_redirects, net.ipv4.ip_forward on w" {
		t.Errorf("String = %q", s)
	}
}
