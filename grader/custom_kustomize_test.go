package grader

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestFirstDifference(t *testing.T) {
	live := map[string]any{
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "nginx", "image": "nginx:1.27"}},
		}}},
	}
	same := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "web"}, "name": "web"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"image": "nginx:1.27", "name": "nginx"}},
		}}, "replicas": int64(1)},
	}
	if d := firstDifference(nil, "", live, same); d != "" {
		t.Errorf("equal objects differ at %q", d)
	}
	for _, tc := range []struct {
		name    string
		applied func(map[string]any)
		want    string
	}{
		{"a changed scalar", func(o map[string]any) { o["spec"].(map[string]any)["replicas"] = int64(3) }, "spec.replicas from 1 to 3"},
		{"an added field", func(o map[string]any) { o["metadata"].(map[string]any)["labels"].(map[string]any)["env"] = "qa" }, "metadata.labels.env from (unset) to qa"},
		{"a field in a list", func(o map[string]any) {
			o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "nginx:1.28"
		}, "spec.template.spec.containers[0].image from nginx:1.27 to nginx:1.28"},
	} {
		applied := runtime.DeepCopyJSON(same)
		tc.applied(applied)
		if got := firstDifference(nil, "", live, applied); got != tc.want {
			t.Errorf("%s: firstDifference = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The report names the field the source states before one the API server derived from it.
func TestFirstDifferenceWithinStatedFields(t *testing.T) {
	live := map[string]any{"spec": map[string]any{"type": "NodePort", "externalTrafficPolicy": "Cluster", "ports": []any{map[string]any{"port": int64(80), "nodePort": int64(30080)}}}}
	applied := map[string]any{"spec": map[string]any{"type": "ClusterIP", "ports": []any{map[string]any{"port": int64(80)}}}}
	stated := map[string]any{"spec": map[string]any{"type": "ClusterIP", "ports": []any{map[string]any{"port": int64(80)}}}}
	if got, want := firstDifference(stated, "", live, applied), "spec.type from NodePort to ClusterIP"; got != want {
		t.Errorf("firstDifference over stated fields = %q, want %q", got, want)
	}
	if got := firstDifference(stated, "", applied, applied); got != "" {
		t.Errorf("equal objects differ at %q", got)
	}
}
