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
