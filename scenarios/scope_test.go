package scenarios

import (
	"slices"
	"testing"
)

func TestScopeNamesWhatTheChecksAndFaultsName(t *testing.T) {
	s := &Scenario{
		Checks: []Check{
			{Name: "web is Ready", PodsReady: &PodsReady{PodSelector: PodSelector{Namespace: "shop", Selector: "app=web"}, Count: 2}},
			{Name: "deployer may create", CanI: &CanI{As: "system:serviceaccount:shop:deployer", Verb: "create", Resource: "deployments", Namespace: "shop", Allowed: true}},
			{Name: "worker is labelled", Field: &FieldCheck{Object: ObjectRef{APIVersion: "v1", Kind: "Node", Name: "lab-worker"}, Path: "{.metadata.labels.disk}"}},
		},
		Collateral: []Check{
			{Name: "dev still cannot read Secrets", CanI: &CanI{As: "dev", Verb: "get", Resource: "secrets", Namespace: "kube-system"}},
		},
		Builds:    []ObjectRef{{Kind: "PriorityClass", Name: "critical"}},
		MayChange: []MayChange{{Kind: "Namespace", Name: "shop", Why: "a policy selects it by label"}},
	}
	sc := s.Scope()
	if !slices.Equal(sc.Namespaces, []string{"shop"}) {
		t.Errorf("namespaces %q: the refused subject's kube-system is no namespace to work in", sc.Namespaces)
	}
	if len(sc.Subjects) != 1 || sc.Subjects[0].Name != "system:serviceaccount:shop:deployer" {
		t.Errorf("subjects %+v: only the one the task grants", sc.Subjects)
	}
	if !sc.HasNode("lab-worker") || sc.HasNode("lab-worker2") {
		t.Errorf("nodes %q", sc.Nodes)
	}
	if !sc.HasKind("PriorityClass") || !sc.HasKind("ClusterRoleBinding") || sc.HasKind("StorageClass") {
		t.Errorf("kinds %q", sc.Kinds)
	}
	if !sc.Has("Namespace", "", "shop") || sc.Has("Namespace", "", "default") {
		t.Error("mayChange names the namespace shop, and only it")
	}
}
