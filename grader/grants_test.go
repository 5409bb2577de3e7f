package grader

import (
	"slices"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/cka-lab/lab/scenarios"
)

func TestGrantsCoveredByWhatTheTaskAllows(t *testing.T) {
	allow := []scenarios.GrantRule{
		{Namespace: "ci", Group: "apps", Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
		{Group: "", Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
	}
	cases := []struct {
		ns   string
		g    grant
		want bool
	}{
		{"ci", grant{"apps", "deployments", "patch"}, true},
		{"ci", grant{"apps", "deployments", "delete"}, false},      // an extra verb
		{"default", grant{"apps", "deployments", "create"}, false}, // another namespace
		{"ci", grant{"apps", "*", "create"}, false},                // every resource of the group
		{"ci", grant{"*", "*", "*"}, false},                        // cluster-admin
		{nowhere, grant{"", "nodes", "list"}, true},                // cluster-wide, as asked
		{"ci", grant{"", "secrets", "get"}, false},                 // another resource
	}
	for _, c := range cases {
		if got := allowed(allow, c.ns, c.g); got != c.want {
			t.Errorf("allowed(%s in %s) = %v, want %v", c.g, c.ns, got, c.want)
		}
	}
}

func TestExpandFlattensRules(t *testing.T) {
	got := expand([]authorizationv1.ResourceRule{
		{Verbs: []string{"get", "list"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}},
		{Verbs: []string{"get"}, APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets"}},
	})
	want := []grant{{"apps", "deployments", "get"}, {"apps", "replicasets", "get"}, {"apps", "deployments", "list"}}
	if !slices.Equal(got, want) {
		t.Errorf("expand = %v, want %v", got, want)
	}
}
