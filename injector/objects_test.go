package injector

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestWorkloadReady(t *testing.T) {
	obj := func(kind string, generation int64, spec, status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"kind": kind, "spec": spec, "status": status}}
		u.SetGeneration(generation)
		return u
	}
	for _, tc := range []struct {
		name string
		w    *unstructured.Unstructured
		want bool
	}{
		{"all replicas ready", obj("Deployment", 2, map[string]any{"replicas": int64(2)}, map[string]any{"observedGeneration": int64(2), "readyReplicas": int64(2)}), true},
		{"one of two ready", obj("Deployment", 1, map[string]any{"replicas": int64(2)}, map[string]any{"observedGeneration": int64(1), "readyReplicas": int64(1)}), false},
		{"replicas unset means one", obj("StatefulSet", 1, map[string]any{}, map[string]any{"observedGeneration": int64(1), "readyReplicas": int64(1)}), true},
		{"spec not observed yet", obj("Deployment", 3, map[string]any{"replicas": int64(1)}, map[string]any{"observedGeneration": int64(2), "readyReplicas": int64(1)}), false},
		{"no status yet", obj("ReplicaSet", 1, map[string]any{"replicas": int64(1)}, nil), false},
		{"daemonset on every node", obj("DaemonSet", 1, map[string]any{}, map[string]any{"observedGeneration": int64(1), "desiredNumberScheduled": int64(2), "numberReady": int64(2), "updatedNumberScheduled": int64(2)}), true},
		{"daemonset not scheduled yet", obj("DaemonSet", 1, map[string]any{}, map[string]any{"observedGeneration": int64(1)}), false},
	} {
		if got := workloadReady(tc.w); got != tc.want {
			t.Errorf("%s: workloadReady = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestQuotaEnforced(t *testing.T) {
	hard := map[string]any{"requests.cpu": "1", "pods": int64(2)}
	live := func(status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"kind": "ResourceQuota", "status": status}}
	}
	for _, tc := range []struct {
		name   string
		status map[string]any
		want   bool
	}{
		{"not counted yet", nil, false},
		{"hard copied, usage not yet", map[string]any{"hard": map[string]any{"requests.cpu": "1", "pods": "2"}}, false},
		{"one resource missing", map[string]any{"hard": map[string]any{"pods": "2"}, "used": map[string]any{"pods": "0"}}, false},
		{"counted", map[string]any{"hard": map[string]any{"requests.cpu": "1", "pods": "2"}, "used": map[string]any{"requests.cpu": "0", "pods": "0"}}, true},
	} {
		if got := quotaEnforced(hard, live(tc.status)); got != tc.want {
			t.Errorf("%s: quotaEnforced = %v, want %v", tc.name, got, tc.want)
		}
	}
}
