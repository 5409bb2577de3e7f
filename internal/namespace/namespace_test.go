package namespace

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeletableKinds(t *testing.T) {
	all := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Namespaced: true, Verbs: all},
			{Name: "pods/status", Namespaced: true, Verbs: []string{"get", "patch", "update"}},
			{Name: "bindings", Namespaced: true, Verbs: []string{"create"}},
			{Name: "nodes", Namespaced: false, Verbs: all},
		}},
		{GroupVersion: "metrics.k8s.io/v1beta1", APIResources: []metav1.APIResource{
			{Name: "pods", Namespaced: true, Verbs: []string{"get", "list"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Namespaced: true, Verbs: all},
		}},
	}
	got, err := deletableKinds(lists)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].String() != "/v1, Resource=pods" || got[1].String() != "apps/v1, Resource=deployments" {
		t.Fatalf("deletableKinds = %v, want core pods and apps deployments", got)
	}

	lists = append(lists, &metav1.APIResourceList{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
		{Name: "widgets", Namespaced: true, Verbs: []string{"delete", "get", "list"}},
	}})
	if _, err := deletableKinds(lists); err == nil {
		t.Fatal("a kind that can be deleted but not by collection must keep the namespace from being finalized")
	}
}
