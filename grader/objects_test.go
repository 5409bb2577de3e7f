package grader

import "testing"

func TestJSONPathPrintsLikeKubectl(t *testing.T) {
	obj := map[string]any{
		"spec":   map[string]any{"storageClassName": "standard", "tolerations": []any{map[string]any{"key": "a"}, map[string]any{"key": "b"}}},
		"status": map[string]any{"phase": "Bound"},
	}
	cases := map[string]string{
		"{.spec.storageClassName}/{.status.phase}": "standard/Bound",
		"{.spec.tolerations[*].key}":               "a b",
		"{.spec.missing}":                          "",
		`{.spec.tolerations[?(@.key=="b")].key}`:   "b",
	}
	for path, want := range cases {
		got, err := jsonPath(obj, path)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
}
