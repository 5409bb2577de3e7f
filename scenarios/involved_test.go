package scenarios

import "testing"

func TestInvolved(t *testing.T) {
	cat, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := cat.Get("bad-image-tag")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := sc.WithValues(3, map[string]string{"seed": "3", "ns": "storefront", "app": "landing", "bad": "nginx:1.72"})
	if err != nil {
		t.Fatal(err)
	}
	namespaces, objects := inst.Involved()
	if !namespaces["storefront"] || len(namespaces) != 1 {
		t.Errorf("namespaces = %v, want storefront alone", namespaces)
	}
	for _, k := range []string{"Namespace//storefront", "Deployment/storefront/landing", "Service/storefront/landing"} {
		if !objects[k] {
			t.Errorf("objects lack %s: %v", k, objects)
		}
	}
}

func TestInvolvedSystemCustom(t *testing.T) {
	cat, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	// The CNI's DaemonSet the fault edits is found at run time; the task still involves kube-system.
	sc, err := cat.Get("cni-daemonset-excluded")
	if err != nil {
		t.Fatal(err)
	}
	if namespaces, _ := sc.Involved(); !namespaces["kube-system"] {
		t.Errorf("cni-daemonset-excluded involves %v, not kube-system", namespaces)
	}
}

// A cordoned, tainted or labelled node is undone on its Node object: the uncordon is the task's own write.
func TestInvolvedNodeFaults(t *testing.T) {
	cat, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"sched-cordoned-node", "taint-dedicated-node"} {
		sc, err := cat.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := sc.Instantiate(1, fakeResolver{})
		if err != nil {
			t.Fatal(err)
		}
		node := inst.Values["node"]
		if _, objects := inst.Involved(); node == "" || !objects["Node//"+node] {
			t.Errorf("%s: objects lack Node//%s: %v", id, node, objects)
		}
	}
}
