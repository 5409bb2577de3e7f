// Package workspace gives each learner of a shared-cluster class a namespace of their own on the instructor's
// cluster: a ServiceAccount bound to the admin ClusterRole in that namespace only, a few cluster-wide reads the
// grader and the hints need, and a kubeconfig carrying a token of that ServiceAccount. Nothing it grants
// reaches into another learner's namespace or changes anything outside the learner's own.
package workspace

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
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
}

// Provision makes (or finds again) the learner's namespace, its ServiceAccount and bindings, and returns a
// kubeconfig with a fresh token. Joining again replaces the ServiceAccount, which revokes the tokens of the
// earlier join: only the kubeconfig last handed out works.
func (p *Provisioner) Provision(ctx context.Context, learner string) (class.Workspace, error) {
	ns, err := p.namespace(ctx, learner)
	if err != nil {
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
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: p.labels(),
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

// learnerRules are the learner's only cluster-wide rights: access reviews for the grader's can-i checks, and
// reading the nodes (where a Pod stopped) and storage classes (which a claim may name), as in the exam.
var learnerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get", "list", "watch"}},
}

// grant creates the ServiceAccount, its admin RoleBinding in ns and its binding to the learner ClusterRole; each
// may exist from an earlier join.
func (p *Provisioner) grant(ctx context.Context, ns string) error {
	meta := func(name, namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: p.labels()}
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: ns}}
	steps := []struct {
		what   string
		create func() error
	}{
		{"ServiceAccount " + ns + "/" + serviceAccount, func() error {
			_, err := p.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta(serviceAccount, ns)}, metav1.CreateOptions{})
			return err
		}},
		{"RoleBinding " + ns + "/" + adminBinding, func() error {
			_, err := p.Kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta(adminBinding, ns), Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"}}, metav1.CreateOptions{})
			return err
		}},
		{"ClusterRole " + learnerRole, func() error {
			_, err := p.Kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta(learnerRole, ""), Rules: learnerRules}, metav1.CreateOptions{})
			return err
		}},
		{"ClusterRoleBinding " + learnerRole + ":" + ns, func() error {
			_, err := p.Kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta(learnerRole+":"+ns, ""),
				Subjects: subject, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: learnerRole}}, metav1.CreateOptions{})
			return err
		}},
	}
	for _, s := range steps {
		if err := s.create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s: %w", s.what, err)
		}
	}
	return nil
}

// Revoke deletes the learner's ServiceAccount, which invalidates every token issued for it (a bound token
// names the ServiceAccount's UID), and its cluster-wide binding. The namespace and what the learner made in it
// stay, for the instructor to look at and delete with the class.
func (p *Provisioner) Revoke(ctx context.Context, ns string) error {
	if err := p.deleteServiceAccount(ctx, ns); err != nil {
		return err
	}
	err := p.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, learnerRole+":"+ns, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete ClusterRoleBinding %s:%s: %w", learnerRole, ns, err)
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
