package scenarios

import (
	"reflect"
	"testing"
)

// Each kind is named by its YAML key, and a Check or Fault says which one is set.
func TestKindsAreTheirFields(t *testing.T) {
	checks, faults := CheckKinds(), FaultKinds()
	if _, ok := checks["podsReady"].(*PodsReady); !ok || checks["sameObject"] == nil || checks["custom"] == nil {
		t.Errorf("check kinds = %v", checks)
	}
	if _, ok := faults["delete"].(*DeleteFault); !ok || faults["apply"] == nil || faults["custom"] == nil {
		t.Errorf("fault kinds = %v", faults)
	}
	c := Check{Logs: &LogsCheck{}}
	if name, n := c.Kind(); name != "logs" || n != 1 || c.Spec() != Kind(c.Logs) {
		t.Errorf("Kind() = %q, %d; Spec() = %v", name, n, c.Spec())
	}
	if name, n := (&Check{}).Kind(); name != "" || n != 0 || (&Check{}).Spec() != nil {
		t.Errorf("an empty check has kind %q (%d)", name, n)
	}
	f := Fault{Delete: &DeleteFault{}, Cordon: &NodeFault{}}
	if name, n := f.Kind(); name != "cordon" || n != 2 {
		t.Errorf("Kind() = %q, %d, want the last of 2", name, n)
	}
}

func TestTouches(t *testing.T) {
	write := "net.ipv4.ip_forward = 0\n# comment\n-kernel.panic=1\n"
	cases := []struct {
		name string
		kind Kind
		want Footprint
	}{
		{"podsReady reads its Pods' state", &PodsReady{PodSelector: PodSelector{Namespace: "ns", Selector: "app=web"}},
			Footprint{Namespaces: []string{"ns"}, Pods: []PodUse{{PodSelector{Namespace: "ns", Selector: "app=web"}, AccessState}}}},
		{"http reaches a Service", &HTTPCheck{Namespace: "ns", Service: "web"},
			Footprint{Namespaces: []string{"ns"}, Services: []ServiceRef{{"ns", "web"}}}},
		{"an absent field needs no object", &FieldCheck{Object: ObjectRef{Kind: "Deployment", Namespace: "ns", Name: "web"}, Absent: true},
			Footprint{Objects: []ObjectUse{{ObjectRef: ObjectRef{Kind: "Deployment", Namespace: "ns", Name: "web"}, Workload: true}}}},
		{"the same node needs no creator", &SameObjectCheck{ObjectRef{Kind: "Node", Name: "w"}},
			Footprint{Objects: []ObjectUse{{ObjectRef: ObjectRef{Kind: "Node", Name: "w"}}}}},
		{"nodeExec names the files of its command", &NodeExecCheck{Node: "cp", Command: []string{"sh", "-c", "grep x /etc/kubernetes/manifests/etcd.yaml"}},
			Footprint{Nodes: []NodeUse{{Name: "cp", Inside: true, Files: []string{"/etc/kubernetes/manifests/etcd.yaml"}}}}},
		{"a custom check names its node and namespace", &CustomCheck{Custom{Func: "cniDaemonSetReadyOn", Args: map[string]string{"node": "w", "namespace": ""}}},
			Footprint{Nodes: []NodeUse{{Name: "w", Inside: true}}, Watches: []string{""}, System: true}},
		{"a sysctl drop-in sets its keys", &NodeFileFault{Node: "w", Path: "/etc/sysctl.d/99-lab.conf", Write: &write},
			Footprint{Nodes: []NodeUse{{Name: "w", Inside: true, Files: []string{"/etc/sysctl.d/99-lab.conf"}, Sysctl: []string{"kernel.panic", "net.ipv4.ip_forward"}}}, ClusterWide: true}},
		{"a taint changes the Node", &TaintFault{Node: "w"}, Footprint{Nodes: []NodeUse{{Name: "w", Object: true}}, ClusterWide: true}},
		{"a custom fault is opaque beyond its arguments", &CustomFault{Custom{Func: "operator", Args: map[string]string{"namespace": "ops", "name": "op"}}},
			Footprint{Namespaces: []string{"ops"}, Opaque: true, Objects: []ObjectUse{
				{ObjectRef: ObjectRef{Kind: "Deployment", Namespace: "ops", Name: "op"}, Exists: true, Created: true},
				{ObjectRef: ObjectRef{Kind: "ServiceAccount", Namespace: "ops", Name: "op"}, Exists: true, Created: true}}}},
	}
	for _, c := range cases {
		if got := c.kind.Touches(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

func TestApplyTouchesWhatItsManifestCreates(t *testing.T) {
	f := &ApplyFault{Manifest: "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\n"}
	want := []ObjectUse{{ObjectRef: ObjectRef{APIVersion: "v1", Kind: "Namespace", Name: "shop"}, Exists: true, Created: true},
		{ObjectRef: ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "c"}, Exists: true, Created: true}}
	if got := f.Touches().Objects; !reflect.DeepEqual(got, want) {
		t.Errorf("objects = %+v", got)
	}
	if p := (&ApplyFault{Manifest: "kind: x"}).Validate(); len(p) != 1 || !p[0].AtField || p[0].Field != "manifest" {
		t.Errorf("an undecodable manifest: %+v", p)
	}
}
