package workspace

import (
	"context"
	"fmt"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cka-lab/lab/scenarios"
)

// apiServerSlice is the EndpointSlice of default/kubernetes on a cluster whose API server is at 172.18.0.2.
var apiServerSlice = &discoveryv1.EndpointSlice{
	ObjectMeta:  metav1.ObjectMeta{Name: "kubernetes", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
	AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"172.18.0.2"}}},
}

// newFake is a Provisioner on a fake cluster that issues numbered tokens, for a class of bad-image-tag.
func newFake(objs ...runtime.Object) (*Provisioner, *fake.Clientset) {
	kc := fake.NewClientset(append(objs, apiServerSlice)...)
	issued := 0
	kc.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		issued++
		return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: fmt.Sprintf("token-%d", issued)}}, nil
	})
	cat, err := scenarios.Builtin()
	if err != nil {
		panic(err)
	}
	iso, err := IsolationFor(cat, []string{"bad-image-tag"}, 7)
	if err != nil {
		panic(err)
	}
	return &Provisioner{Kube: kc, Server: "https://shared.example:6443", CAData: []byte("ca"), ClassID: "class-1", Isolation: iso}, kc
}

func TestProvisionConfinesTheLearnerToANamespace(t *testing.T) {
	p, kc := newFake()
	ctx := context.Background()
	ws, err := p.Provision(ctx, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	if ws.Namespace != "lab-alice" {
		t.Fatalf("namespace = %q, want lab-alice", ws.Namespace)
	}
	ns, err := kc.CoreV1().Namespaces().Get(ctx, "lab-alice", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels[ClassLabel] != "class-1" || ns.Annotations[learnerAnno] != "alice" {
		t.Errorf("namespace metadata = %v %v", ns.Labels, ns.Annotations)
	}
	rb, err := kc.RbacV1().RoleBindings("lab-alice").Get(ctx, adminBinding, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rb.RoleRef.Kind != "ClusterRole" || rb.RoleRef.Name != "admin" || len(rb.Subjects) != 1 ||
		rb.Subjects[0].Name != serviceAccount || rb.Subjects[0].Namespace != "lab-alice" {
		t.Errorf("admin binding = %+v", rb)
	}
	crb, err := kc.RbacV1().ClusterRoleBindings().Get(ctx, p.clusterBinding("lab-alice"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := kc.RbacV1().ClusterRoles().Get(ctx, crb.RoleRef.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cr.Rules {
		for _, v := range r.Verbs {
			if v != "get" && v != "list" && v != "watch" && (v != "create" || r.Resources[0] != "subjectaccessreviews") {
				t.Errorf("the cluster-wide grant changes something: %+v", r)
			}
		}
	}
	if crb.Subjects[0].Name != serviceAccount || crb.Subjects[0].Namespace != "lab-alice" {
		t.Errorf("cluster-wide binding subjects = %+v", crb.Subjects)
	}

	cfg, err := clientcmd.Load([]byte(ws.Kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Contexts[cfg.CurrentContext]
	if c.Namespace != "lab-alice" || cfg.AuthInfos[c.AuthInfo].Token != "token-1" || cfg.Clusters[c.Cluster].Server != p.Server ||
		string(cfg.Clusters[c.Cluster].CertificateAuthorityData) != "ca" {
		t.Errorf("kubeconfig = %s", ws.Kubeconfig)
	}

	again, err := p.Provision(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if again.Namespace != "lab-alice" || again.Kubeconfig == ws.Kubeconfig {
		t.Errorf("joining again: namespace %s, new token %t; want lab-alice with a new token", again.Namespace, again.Kubeconfig != ws.Kubeconfig)
	}
}

func TestLearnersNeverShareANamespace(t *testing.T) {
	foreign := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "lab-dev"}}
	p, _ := newFake(foreign)
	ctx := context.Background()
	got := map[string]string{}
	for _, learner := range []string{"a.b", "a_b", "A-B", "dev"} {
		ws, err := p.Provision(ctx, learner)
		if err != nil {
			t.Fatal(err)
		}
		if other, taken := got[ws.Namespace]; taken {
			t.Errorf("%s and %s share namespace %s", other, learner, ws.Namespace)
		}
		got[ws.Namespace] = learner
	}
	if got["lab-dev"] != "" || got["lab-dev-2"] != "dev" {
		t.Errorf("a namespace lab did not create was handed out: %v", got)
	}
	if got["lab-a-b"] != "a.b" || got["lab-a-b-2"] != "a_b" || got["lab-a-b-3"] != "A-B" {
		t.Errorf("namespaces = %v", got)
	}
}

func TestNamespaceFor(t *testing.T) {
	for in, want := range map[string]string{"alice": "lab-alice", "Bob.Smith": "lab-bob-smith", "__": "lab-learner", "-x_": "lab-x"} {
		if got := NamespaceFor(in); got != want {
			t.Errorf("NamespaceFor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRevokeAndRejoinInvalidateEarlierCredentials(t *testing.T) {
	p, kc := newFake()
	ctx := context.Background()
	if _, err := p.Provision(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	kc.ClearActions()
	if _, err := p.Provision(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	deleted := false
	for _, a := range kc.Actions() {
		deleted = deleted || (a.GetVerb() == "delete" && a.GetResource().Resource == "serviceaccounts" && a.GetNamespace() == "lab-alice")
	}
	if !deleted {
		t.Errorf("joining again kept the ServiceAccount whose tokens the first join handed out: %v", kc.Actions())
	}

	if err := p.Revoke(ctx, "lab-alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := kc.CoreV1().ServiceAccounts("lab-alice").Get(ctx, serviceAccount, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ServiceAccount after Revoke: %v, want it gone (which invalidates its tokens)", err)
	}
	if _, err := kc.RbacV1().ClusterRoleBindings().Get(ctx, p.clusterBinding("lab-alice"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the cluster-wide binding after Revoke: %v, want it gone", err)
	}
	if _, err := kc.CoreV1().Namespaces().Get(ctx, "lab-alice", metav1.GetOptions{}); err != nil {
		t.Errorf("Revoke deleted the namespace, which the instructor may still want to look at: %v", err)
	}
	if err := p.Revoke(ctx, "lab-alice"); err != nil {
		t.Errorf("revoking twice: %v", err)
	}
}
