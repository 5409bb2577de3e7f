package grader

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/scenarios"
)

// nowhere is a namespace no cluster has: what a subject may do there, it may do in every namespace.
const nowhere = "lab-no-such-namespace"

// everyone is what every authenticated user may do on a kubeadm cluster (system:basic-user): ask what it
// is allowed and who it is.
var everyone = []grant{
	{"authorization.k8s.io", "selfsubjectaccessreviews", "create"},
	{"authorization.k8s.io", "selfsubjectrulesreviews", "create"},
	{"authentication.k8s.io", "selfsubjectreviews", "create"},
}

// grant is one verb on one resource of an API group; "*" stands for any.
type grant struct{ group, resource, verb string }

func (g grant) String() string { return g.verb + " " + resource(g.resource, g.group, "") }

// grants asks the API server, as the subject, what it may do in each namespace the task names, in default,
// and in a namespace that does not exist (what holds there holds everywhere), and fails on anything the task
// does not allow in an API group the cluster serves.
func (e Env) grants(ctx context.Context, c *scenarios.GrantsCheck) Result {
	user, groups := subject(c.As, c.Groups)
	cfg := rest.CopyConfig(e.Clients.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return e.fail("a client acting as %s: %v", c.As, err)
	}
	namespaces := []string{nowhere, "default"}
	for _, r := range c.Allow {
		if r.Namespace != "" && !slices.Contains(namespaces, r.Namespace) {
			namespaces = append(namespaces, r.Namespace)
		}
	}
	served, err := servedGroups(e.Clients.Kube)
	if err != nil {
		return e.fail("list the API groups the cluster serves: %v", err)
	}
	everywhere := map[grant]bool{}
	var extra []string
	for _, ns := range namespaces {
		review := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}
		rr, err := kc.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return e.fail("kubectl auth can-i --list --as=%s -n %s: %v", c.As, ns, err)
		}
		var here []string
		for _, g := range expand(rr.Status.ResourceRules) {
			if slices.Contains(everyone, g) || allowed(c.Allow, ns, g) || everywhere[g] || (g.group != "*" && !served[g.group]) {
				continue
			}
			if ns == nowhere {
				everywhere[g] = true
			}
			here = append(here, g.String())
		}
		if len(here) > 0 {
			where := "in namespace " + ns
			if ns == nowhere {
				where = "in every namespace"
			}
			extra = append(extra, fmt.Sprintf("%s %s", strings.Join(here, ", "), where))
		}
	}
	if len(extra) == 0 {
		return pass("%s may do what the task allows and nothing more (kubectl auth can-i --list)", c.As)
	}
	return Result{Evidence: fmt.Sprintf("%s may also %s: grant only what the task asks", c.As, strings.Join(extra, "; ")),
		Stage: journey.Authorization}
}

// servedGroups are the API groups the cluster serves: a rule naming another group (a misspelt one left behind
// by a fix) authorizes no request that can succeed, so it grants nothing in effect.
func servedGroups(kc kubernetes.Interface) (map[string]bool, error) {
	groups, err := kc.Discovery().ServerGroups()
	if err != nil {
		return nil, err
	}
	out := map[string]bool{"": true}
	for _, g := range groups.Groups {
		out[g.Name] = true
	}
	return out, nil
}

// expand flattens rules into single grants, sorted.
func expand(rules []authorizationv1.ResourceRule) []grant {
	seen := map[grant]bool{}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					seen[grant{g, res, v}] = true
				}
			}
		}
	}
	out := make([]grant, 0, len(seen))
	for g := range seen {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// allowed says whether a rule the task allows covers g in namespace ns. A wildcard granted is covered only by
// the same wildcard allowed: "*" verbs are more than get, list and watch.
func allowed(rules []scenarios.GrantRule, ns string, g grant) bool {
	for _, r := range rules {
		if (r.Namespace == "" || r.Namespace == ns) && r.Group == g.group && slices.Contains(r.Resources, g.resource) && slices.Contains(r.Verbs, g.verb) {
			return true
		}
	}
	return false
}
