package grader

import "testing"

func TestJSONPathPrintsLikeKubectl(t *testing.T) {
	obj := map[string]any{
		"spec": map[string]any{"storageClassName": "standard", "args": []any{"-g", "daemon off;"},
			"tolerations": []any{map[string]any{"key": "a"}, map[string]any{"key": "b"}}},
		"status": map[string]any{"phase": "Bound"},
		"data":   map[string]any{"app.KEY": "v"},
	}
	cases := map[string]string{
		"{.spec.storageClassName}/{.status.phase}": "standard/Bound",
		"{.spec.tolerations[*].key}":               "a b",
		`{.spec.tolerations[?(@.key=="b")].key}`:   "b",
		"{.spec.args[*]}":                          "-g daemon off;",
		"x {.spec.args[0]}":                        "x -g",
		`{.data.app\.KEY}/{.data.missing}`:         "v/",
		"{.spec.nothing}":                          "",
	}
	for path, want := range cases {
		got, err := jsonPath(obj, path)
		if err != nil || got != want {
			t.Errorf("jsonPath(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
}

func TestSelectorStringIsStable(t *testing.T) {
	m := map[string]string{"tier": "web", "app": "shop", "env": "prod", "zone": "a"}
	for range 20 {
		if got := selectorString(m); got != "app=shop,env=prod,tier=web,zone=a" {
			t.Fatalf("selectorString = %q", got)
		}
	}
}
