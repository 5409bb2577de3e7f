package workspace

import (
	"context"
	"fmt"
	"os"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/scenarios"
)

// New returns a Provisioner for the cluster of an instructor's kubeconfig. The issued kubeconfigs name the
// same API server, so that address must be one the learners can reach.
func New(kubeconfig string) (*Provisioner, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load shared cluster kubeconfig %s: %w", kubeconfig, err)
	}
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, fmt.Errorf("read the shared cluster's CA: %w", err)
		}
	}
	clients, err := kube.FromConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("shared cluster kubeconfig %s: %w", kubeconfig, err)
	}
	cat, err := scenarios.Builtin()
	if err != nil {
		return nil, err
	}
	return &Provisioner{Kube: clients.Kube, Clients: clients, Catalog: cat, Server: cfg.Host, CAData: ca}, nil
}

// required is what the instructor's credentials must allow to set up a learner.
var required = []authorizationv1.ResourceAttributes{
	{Verb: "create", Resource: "namespaces"},
	{Verb: "update", Resource: "namespaces"},
	{Verb: "create", Resource: "resourcequotas"},
	{Verb: "create", Resource: "limitranges"},
	{Verb: "create", Group: "networking.k8s.io", Resource: "networkpolicies"},
	{Verb: "list", Group: "discovery.k8s.io", Resource: "endpointslices", Namespace: metav1.NamespaceDefault},
	{Verb: "create", Resource: "serviceaccounts"},
	{Verb: "create", Resource: "serviceaccounts", Subresource: "token"},
	{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "rolebindings"},
	{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
	{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"},
}

// Check proves the shared cluster answers and the instructor may set up learners, before anyone joins.
func (p *Provisioner) Check(ctx context.Context) error {
	var missing []string
	for _, attrs := range required {
		ssar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}
		res, err := p.Kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, ssar, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("shared cluster at %s does not answer: %w", p.Server, err)
		}
		if !res.Status.Allowed {
			missing = append(missing, strings.TrimSuffix(attrs.Verb+" "+attrs.Resource+"/"+attrs.Subresource, "/"))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the shared cluster's kubeconfig may not %s: use a cluster-admin kubeconfig", strings.Join(missing, ", "))
	}
	return nil
}
