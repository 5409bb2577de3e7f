package namespace

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/cka-lab/lab/internal/kube"
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

func TestAggregated(t *testing.T) {
	apiService := func(name string, service map[string]any) *unstructured.Unstructured {
		spec := map[string]any{}
		if service != nil {
			spec["service"] = service
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": name}, "spec": spec}}
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{apiServices: "APIServiceList"},
		apiService("v1beta1.metrics.k8s.io", map[string]any{"namespace": "kube-system", "name": "metrics-server"}),
		apiService("v1.apps", nil))
	c := &kube.Clients{Dynamic: dyn}
	ctx := context.Background()
	for _, tc := range []struct {
		gvs  []schema.GroupVersion
		want bool
	}{
		{[]schema.GroupVersion{{Group: "metrics.k8s.io", Version: "v1beta1"}}, true},
		{[]schema.GroupVersion{{Group: "metrics.k8s.io", Version: "v1beta1"}, {Group: "apps", Version: "v1"}}, false}, // a local group failing is the cluster's fault
		{[]schema.GroupVersion{{Group: "custom.example.com", Version: "v1"}}, false},                                  // no APIService says what it is
	} {
		if got := aggregated(ctx, c, tc.gvs); got != tc.want {
			t.Errorf("aggregated(%v) = %v, want %v", tc.gvs, got, tc.want)
		}
	}
}
