// Package workspace gives each learner of a shared-cluster class a namespace of their own on the instructor's
// cluster: a ServiceAccount bound to the admin ClusterRole in that namespace only, a few cluster-wide reads the
// grader and the hints need, and a kubeconfig carrying a token of that ServiceAccount. Each namespace enforces a
// Pod Security level, a quota and container defaults sized from the class's scenarios, and NetworkPolicies that
// admit no other learner's Pods. Nothing it grants reaches into another learner's namespace or changes anything
// outside the learner's own.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/scenarios"
)

// Labels and names of what a class creates, so the instructor can find and delete it afterwards.
const (
	ManagedBy      = "lab-class"
	ClassLabel     = "lab.cka/class"
	learnerAnno    = "lab.cka/learner"
	serviceAccount = "learner"
	adminBinding   = "learner-admin"
	learnerRole    = "lab-class-learner"
)

// TokenTTL is how long a learner's credentials last: a class day. Joining again issues fresh ones.
const TokenTTL = 24 * time.Hour

// Provisioner creates learners' namespaces on the shared cluster and grades them; it implements
// class.SharedCluster.
type Provisioner struct {
	Kube kubernetes.Interface
	// Clients read the namespaces the server grades; Catalog holds the scenarios it grades.
	Clients *kube.Clients
	Catalog *scenarios.Catalog
	// Server and CAData are the API server as the issued kubeconfigs name it.
	Server string
	CAData []byte
	// ClassID labels everything the class creates.
	ClassID string
	// Isolation is what every namespace gets, sized for the class's scenarios (IsolationFor).
	Isolation Isolation
}

// Provision makes (or finds again) the learner's namespace, its ServiceAccount and bindings, and returns a
// kubeconfig with a fresh token. Joining again replaces the ServiceAccount, which revokes the tokens of the
// earlier join: only the kubeconfig last handed out works.
func (p *Provisioner) Provision(ctx context.Context, learner string) (class.Workspace, error) {
	if p.Isolation.PodSecurity == "" {
		return class.Workspace{}, errors.New("the class's namespaces are not sized: no Isolation for its scenarios")
	}
	ns, err := p.namespace(ctx, learner)
	if err != nil {
		return class.Workspace{}, err
	}
	if err := p.isolate(ctx, ns); err != nil {
		return class.Workspace{}, err
	}
	if err := p.deleteServiceAccount(ctx, ns); err != nil {
		return class.Workspace{}, err
	}
	if err := p.grant(ctx, ns); err != nil {
		return class.Workspace{}, err
	}
	ttl := int64(TokenTTL.Seconds())
	tr, err := p.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &ttl}}, metav1.CreateOptions{})
	if err != nil {
		return class.Workspace{}, fmt.Errorf("issue a token for %s/%s: %w", ns, serviceAccount, err)
	}
	kc, err := class.Kubeconfig(p.Server, p.CAData, ns, learner, tr.Status.Token)
	if err != nil {
		return class.Workspace{}, err
	}
	return class.Workspace{Namespace: ns, Kubeconfig: string(kc)}, nil
}

// namespaceCandidates bounds the suffixes tried when learners' names map to the same namespace name.
const namespaceCandidates = 20

// namespace returns the learner's namespace, creating it on the first join. Learner names are unique but may
// map to one namespace name ("a.b" and "a_b"), so each namespace is annotated with its learner and a taken
// one is skipped: creating a namespace is atomic, so two learners never share one.
func (p *Provisioner) namespace(ctx context.Context, learner string) (string, error) {
	owner := strings.ToLower(learner)
	base := NamespaceFor(learner)
	for i := 1; i <= namespaceCandidates; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		labels := p.labels()
		maps.Copy(labels, p.Isolation.namespaceLabels())
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels,
			Annotations: map[string]string{learnerAnno: owner}}}
		_, err := p.Kube.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{})
		if err == nil {
			return name, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("create namespace %s: %w", name, err)
		}
		live, err := p.Kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("read namespace %s: %w", name, err)
		}
		if live.Annotations[learnerAnno] == owner && live.Labels[ClassLabel] == p.ClassID {
			// A namespace made before the server restarted keeps its Pod Security level.
			maps.Copy(labels, live.Labels)
			maps.Copy(labels, p.Isolation.namespaceLabels())
			if maps.Equal(labels, live.Labels) {
				return name, nil
			}
			live.Labels = labels
			if _, err := p.Kube.CoreV1().Namespaces().Update(ctx, live, metav1.UpdateOptions{}); err != nil {
				return "", fmt.Errorf("label namespace %s with Pod Security %s: %w", name, p.Isolation.PodSecurity, err)
			}
			return name, nil
		}
	}
	return "", fmt.Errorf("namespaces %s to %s-%d are all taken", base, base, namespaceCandidates)
}

var notDNSLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// NamespaceFor is the namespace a learner's name asks for: lab-<name> as a DNS label.
func NamespaceFor(learner string) string {
	name := strings.Trim(notDNSLabel.ReplaceAllString(strings.ToLower(learner), "-"), "-")
	if name == "" {
		name = "learner"
	}
	return "lab-" + name
}

// learnerRules are the learner's only cluster-wide rights: access reviews for the grader's can-i checks (an
// answer about permissions, no object), and reading the nodes (where a Pod stopped) and storage classes (which
// a claim may name), as in the exam. No namespaced resource is readable cluster-wide: no other learner's
// Secrets, Pods or events, and not even the list of namespaces.
var learnerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get", "list", "watch"}},
}

// clusterRole is the class's ClusterRole of learnerRules: one per class, so deleting a class's objects by its
// label never takes another class's, and a class served by a newer lab never keeps an older one's rules.
func (p *Provisioner) clusterRole() string { return learnerRole + ":" + p.ClassID }

// clusterBinding binds the learner of ns to the class's ClusterRole.
func (p *Provisioner) clusterBinding(ns string) string { return p.clusterRole() + ":" + ns }

// grant creates the ServiceAccount, its admin RoleBinding in ns and its binding to the class's ClusterRole;
// each may exist from an earlier join, and the ClusterRole gets the rules of this lab.
func (p *Provisioner) grant(ctx context.Context, ns string) error {
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: ns}}
	rbac := p.Kube.RbacV1()
	role := &rbacv1.ClusterRole{ObjectMeta: p.meta(p.clusterRole(), ""), Rules: learnerRules}
	steps := []struct {
		what           string
		create, update func() error
	}{
		{"ServiceAccount " + ns + "/" + serviceAccount, func() error {
			_, err := p.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: p.meta(serviceAccount, ns)}, metav1.CreateOptions{})
			return err
		}, nil},
		{"RoleBinding " + ns + "/" + adminBinding, func() error {
			_, err := rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: p.meta(adminBinding, ns), Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"}}, metav1.CreateOptions{})
			return err
		}, nil},
		{"ClusterRole " + role.Name, func() error {
			_, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
			return err
		}, func() error {
			live, err := rbac.ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			live.Rules = role.Rules
			_, err = rbac.ClusterRoles().Update(ctx, live, metav1.UpdateOptions{})
			return err
		}},
		{"ClusterRoleBinding " + p.clusterBinding(ns), func() error {
			_, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: p.meta(p.clusterBinding(ns), ""),
				Subjects: subject, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}, metav1.CreateOptions{})
			return err
		}, nil},
	}
	for _, s := range steps {
		if err := upsert(s.create, s.update); err != nil {
			return fmt.Errorf("create %s: %w", s.what, err)
		}
	}
	return nil
}

// isolate puts the class's Pod Security, quota, container defaults and NetworkPolicies into ns, replacing
// those of an earlier join (made, perhaps, by a server sized for other scenarios).
func (p *Provisioner) isolate(ctx context.Context, ns string) error {
	apiServer, err := p.apiServerCIDRs(ctx)
	if err != nil {
		return err
	}
	meta := p.meta("", ns)
	core, netv1 := p.Kube.CoreV1(), p.Kube.NetworkingV1()
	quota, limits := p.Isolation.quota(meta), p.Isolation.limitRange(meta)
	steps := []struct {
		what           string
		create, update func() error
	}{
		{"ResourceQuota " + ns + "/" + quota.Name, func() error {
			_, err := core.ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{})
			return err
		}, func() error {
			live, err := core.ResourceQuotas(ns).Get(ctx, quota.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			live.Spec = quota.Spec
			_, err = core.ResourceQuotas(ns).Update(ctx, live, metav1.UpdateOptions{})
			return err
		}},
		{"LimitRange " + ns + "/" + limits.Name, func() error {
			_, err := core.LimitRanges(ns).Create(ctx, limits, metav1.CreateOptions{})
			return err
		}, func() error {
			live, err := core.LimitRanges(ns).Get(ctx, limits.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			live.Spec = limits.Spec
			_, err = core.LimitRanges(ns).Update(ctx, live, metav1.UpdateOptions{})
			return err
		}},
	}
	for _, np := range p.Isolation.policies(meta, apiServer) {
		steps = append(steps, struct {
			what           string
			create, update func() error
		}{"NetworkPolicy " + ns + "/" + np.Name, func() error {
			_, err := netv1.NetworkPolicies(ns).Create(ctx, np, metav1.CreateOptions{})
			return err
		}, func() error {
			live, err := netv1.NetworkPolicies(ns).Get(ctx, np.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			live.Spec = np.Spec
			_, err = netv1.NetworkPolicies(ns).Update(ctx, live, metav1.UpdateOptions{})
			return err
		}})
	}
	if !p.Isolation.Egress {
		// A class whose scenarios bring egress policies of their own leaves egress to them.
		if err := netv1.NetworkPolicies(ns).Delete(ctx, egressPolicy, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete NetworkPolicy %s/%s: %w", ns, egressPolicy, err)
		}
	}
	for _, s := range steps {
		if err := upsert(s.create, s.update); err != nil {
			return fmt.Errorf("put %s into the learner's namespace: %w", s.what, err)
		}
	}
	return nil
}

// upsert creates an object, or updates the one there when update is given; an object that exists and has no
// update is kept.
func upsert(create, update func() error) error {
	err := create()
	switch {
	case err == nil:
		return nil
	case !apierrors.IsAlreadyExists(err):
		return err
	case update == nil:
		return nil
	}
	return update()
}

// apiServerCIDRs are the API server's addresses as the default/kubernetes Service's EndpointSlices list
// them, each as a one-address CIDR: where the API server's Service and Pod proxy connect to a Pod from.
func (p *Provisioner) apiServerCIDRs(ctx context.Context) ([]string, error) {
	list, err := p.Kube.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx,
		metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
	if err != nil {
		return nil, fmt.Errorf("read the API server's addresses (EndpointSlices of default/kubernetes): %w", err)
	}
	var cidrs []string
	for _, s := range list.Items {
		bits := "/32"
		if s.AddressType == discoveryv1.AddressTypeIPv6 {
			bits = "/128"
		}
		for _, e := range s.Endpoints {
			for _, a := range e.Addresses {
				if !slices.Contains(cidrs, a+bits) {
					cidrs = append(cidrs, a+bits)
				}
			}
		}
	}
	if len(cidrs) == 0 {
		return nil, errors.New("the shared cluster lists no address of its API server (EndpointSlices of default/kubernetes): the learners' NetworkPolicies need it")
	}
	return cidrs, nil
}

// Revoke deletes the learner's ServiceAccount, which invalidates every token issued for it (a bound token
// names the ServiceAccount's UID), and its cluster-wide binding. The namespace and what the learner made in it
// stay, for the instructor to look at and delete with the class.
func (p *Provisioner) Revoke(ctx context.Context, ns string) error {
	if err := p.deleteServiceAccount(ctx, ns); err != nil {
		return err
	}
	err := p.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, p.clusterBinding(ns), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete ClusterRoleBinding %s: %w", p.clusterBinding(ns), err)
	}
	return nil
}

// deleteServiceAccount deletes the learner's ServiceAccount, if there is one. A ServiceAccount has no
// finalizers, so it is gone when Delete returns, and one created again under its name has a new UID.
func (p *Provisioner) deleteServiceAccount(ctx context.Context, ns string) error {
	err := p.Kube.CoreV1().ServiceAccounts(ns).Delete(ctx, serviceAccount, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete ServiceAccount %s/%s: %w", ns, serviceAccount, err)
	}
	return nil
}

func (p *Provisioner) labels() map[string]string {
	return map[string]string{"app.kubernetes.io/managed-by": ManagedBy, ClassLabel: p.ClassID}
}

func (p *Provisioner) meta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: p.labels()}
}
