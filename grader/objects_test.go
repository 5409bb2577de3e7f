package grader

import (
	"testing"
	"time"

	"github.com/cka-lab/lab/scenarios"
)

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

func TestRecreated(t *testing.T) {
	shown := time.Date(2026, 12, 5, 10, 0, 5, 700e6, time.UTC)
	cases := []struct {
		created, shown time.Time
		want           bool
	}{
		{shown.Add(-3 * time.Second).Truncate(time.Second), shown, false}, // made by the scenario's setup
		{shown.Truncate(time.Second), shown, true},                        // the second it was shown in, after the setup's
		{shown.Add(90 * time.Second).Truncate(time.Second), shown, true},  // deleted and recreated by the learner
		{shown.Add(90 * time.Second), time.Time{}, false},                 // no start time known: not judged
	}
	for _, c := range cases {
		if got := recreated(c.created, c.shown); got != c.want {
			t.Errorf("recreated(%s, %s) = %v, want %v", c.created, c.shown, got, c.want)
		}
	}
}

func TestTypedFieldComparisons(t *testing.T) {
	images := []struct {
		got, want string
		same      bool
	}{
		{"nginx:1.27", "nginx:1.27", true},
		{"docker.io/library/nginx:1.27", "nginx:1.27", true},
		{"index.docker.io/library/nginx:1.27", "nginx:1.27", true},
		{"nginx", "nginx:latest", true},
		{"nginx:1.27.1", "nginx:1.27", false},
		{"quay.io/nginx:1.27", "nginx:1.27", false},
	}
	for _, c := range images {
		if got := sameImage(c.got, c.want); got != c.same {
			t.Errorf("sameImage(%q, %q) = %v", c.got, c.want, got)
		}
	}
	quantities := []struct {
		got string
		r   scenarios.QuantityRange
		in  bool
	}{
		{"200M", scenarios.QuantityRange{Max: "256Mi"}, true},
		{"0.25Gi", scenarios.QuantityRange{Min: "1Mi", Max: "256Mi"}, true},
		{"268435456", scenarios.QuantityRange{Max: "256Mi"}, true},
		{"257Mi", scenarios.QuantityRange{Max: "256Mi"}, false},
		{"0.5", scenarios.QuantityRange{Max: "500m"}, true},
		{"67108864", scenarios.QuantityRange{Min: "64Mi", Max: "64Mi"}, true},
		{"", scenarios.QuantityRange{Max: "256Mi"}, false},
	}
	for _, c := range quantities {
		if got := inRange(c.got, c.r); got != c.in {
			t.Errorf("inRange(%q, %+v) = %v", c.got, c.r, got)
		}
	}
}
