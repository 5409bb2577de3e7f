package grader

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/scenarios"
)

// subject expands a user or ServiceAccount name into what the API server authenticates it as.
func subject(as string, groups []string) (string, []string) {
	gs := append([]string{"system:authenticated"}, groups...)
	if rest, ok := strings.CutPrefix(as, "system:serviceaccount:"); ok {
		ns, _, _ := strings.Cut(rest, ":")
		gs = append(gs, "system:serviceaccounts", "system:serviceaccounts:"+ns)
	}
	return as, gs
}

func (e Env) access(ctx context.Context, as string, groups []string, attrs *authorizationv1.ResourceAttributes) (bool, string, error) {
	user, gs := subject(as, groups)
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: gs, ResourceAttributes: attrs,
	}}
	res, err := e.Clients.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, "", err
	}
	return res.Status.Allowed, res.Status.Reason, nil
}

func (e Env) canI(ctx context.Context, c *scenarios.CanI) Result {
	allowed, reason, err := e.access(ctx, c.As, c.Groups, &authorizationv1.ResourceAttributes{
		Namespace: c.Namespace, Verb: c.Verb, Group: c.Group, Resource: c.Resource, Subresource: c.Subresource,
	})
	cmd := fmt.Sprintf("kubectl auth can-i %s %s --as=%s", c.Verb, resource(c.Resource, c.Group, c.Subresource), c.As)
	if c.Namespace != "" {
		cmd += " -n " + c.Namespace
	}
	if err != nil {
		return e.fail("%s: %v", cmd, err)
	}
	answer := map[bool]string{true: "yes", false: "no"}[allowed]
	if allowed == c.Allowed {
		return pass("%s says %s", cmd, answer)
	}
	if reason != "" {
		reason = " (" + reason + ")"
	}
	return Result{Evidence: fmt.Sprintf("%s says %s, want %s%s", cmd, answer, map[bool]string{true: "yes", false: "no"}[c.Allowed], reason), Stage: journey.Authorization}
}

func resource(r, group, sub string) string {
	if group != "" {
		r += "." + group
	}
	if sub != "" {
		r += "/" + sub
	}
	return r
}

// notClusterAdmin fails when the subject may do anything anywhere, and names the binding that grants it: the
// access review's reason does, where matching the subject against bindings would also find harmless ones
// (every ServiceAccount is in a group some system binding names).
func (e Env) notClusterAdmin(ctx context.Context, c *scenarios.SubjectCheck) Result {
	allowed, reason, err := e.access(ctx, c.Subject, nil, &authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"})
	if err != nil {
		return e.fail("access review for %s: %v", c.Subject, err)
	}
	if !allowed {
		return pass("%s is not a cluster admin", c.Subject)
	}
	if reason != "" {
		reason = " (" + reason + ")"
	}
	return Result{Evidence: fmt.Sprintf("%s can do anything in the whole cluster%s: grant only what the task asks", c.Subject, reason), Stage: journey.Authorization}
}
