package grader

import "testing"

func TestParentNameDefaultsToTheRoutesNamespace(t *testing.T) {
	for _, c := range []struct {
		ref  map[string]any
		want string
	}{
		{map[string]any{"name": "public"}, "shop/public"},
		{map[string]any{"name": "public", "namespace": "infra", "sectionName": "http"}, "infra/public/http"},
		{map[string]any{"name": "public", "port": int64(443)}, "shop/public:443"},
	} {
		if got := parentName(c.ref, "shop"); got != c.want {
			t.Errorf("parentName(%v) = %q, want %q", c.ref, got, c.want)
		}
	}
}
