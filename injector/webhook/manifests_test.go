package webhook

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testParams(t *testing.T) Params {
	return Params{
		Name:              testService,
		Namespace:         testNamespace,
		Image:             "lab.local/lab-webhook:0123456789ab",
		Policy:            "require-limits",
		NamespaceSelector: map[string]string{"lab.cka/webhook": "on"},
		Certs:             testCerts(t),
	}
}

// split asserts Objects' order and types: Secret, Deployment, Service, then
// the configuration last so it is created only when the webhook can answer.
func split(t *testing.T, objs []Object) (*corev1.Secret, *appsv1.Deployment, *corev1.Service, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	t.Helper()
	if len(objs) != 4 {
		t.Fatalf("got %d objects, want 4", len(objs))
	}
	sec, ok1 := objs[0].(*corev1.Secret)
	dep, ok2 := objs[1].(*appsv1.Deployment)
	svc, ok3 := objs[2].(*corev1.Service)
	vwc, ok4 := objs[3].(*admissionregistrationv1.ValidatingWebhookConfiguration)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatalf("objects are %T %T %T %T", objs[0], objs[1], objs[2], objs[3])
	}
	return sec, dep, svc, vwc
}

func TestObjects(t *testing.T) {
	p := testParams(t)
	objs, err := Objects(p)
	if err != nil {
		t.Fatalf("Objects: %v", err)
	}
	sec, dep, svc, vwc := split(t, objs)

	for _, o := range objs {
		if o.GetLabels()["app.kubernetes.io/managed-by"] != "lab" {
			t.Errorf("%T %s lacks app.kubernetes.io/managed-by=lab", o, o.GetName())
		}
		if o.GetObjectKind().GroupVersionKind().Kind == "" {
			t.Errorf("%T %s has no TypeMeta", o, o.GetName())
		}
	}

	if sec.Type != corev1.SecretTypeTLS || !bytes.Equal(sec.Data["tls.crt"], p.Certs.CertPEM) || !bytes.Equal(sec.Data["tls.key"], p.Certs.KeyPEM) {
		t.Errorf("secret %s does not hold the serving key pair", sec.Name)
	}

	if *dep.Spec.Replicas != 1 {
		t.Errorf("replicas = %d, want 1 by default", *dep.Spec.Replicas)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if c.Image != p.Image || c.ImagePullPolicy != corev1.PullNever {
		t.Errorf("container image %q pull %q, want %q pull Never", c.Image, c.ImagePullPolicy, p.Image)
	}
	wantArgs := []string{"webhook", "serve", "--cert", "/tls/tls.crt", "--key", "/tls/tls.key", "--policy", "require-limits"}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args = %q, want %q", c.Args, wantArgs)
	}
	probe := c.ReadinessProbe.HTTPGet
	if probe == nil || probe.Path != "/healthz" || probe.Port.IntValue() != 8443 || probe.Scheme != corev1.URISchemeHTTPS {
		t.Errorf("readiness probe = %+v, want HTTPS GET /healthz on 8443", probe)
	}
	if sc := dep.Spec.Template.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("pod does not require runAsNonRoot")
	}
	vol := dep.Spec.Template.Spec.Volumes[0]
	if vol.Secret == nil || vol.Secret.SecretName != sec.Name || c.VolumeMounts[0].MountPath != "/tls" {
		t.Errorf("secret %s is not mounted at /tls", sec.Name)
	}
	if !labelsMatch(dep.Spec.Selector.MatchLabels, dep.Spec.Template.Labels) || !labelsMatch(svc.Spec.Selector, dep.Spec.Template.Labels) {
		t.Error("deployment or service selector does not match the pod template")
	}

	if port := svc.Spec.Ports[0]; port.Port != 443 || port.TargetPort.IntValue() != 8443 {
		t.Errorf("service port %d -> %s, want 443 -> 8443", port.Port, port.TargetPort.String())
	}

	if vwc.Namespace != "" || len(vwc.Webhooks) != 1 {
		t.Fatalf("configuration namespace %q with %d webhooks", vwc.Namespace, len(vwc.Webhooks))
	}
	wh := vwc.Webhooks[0]
	if strings.Count(wh.Name, ".") < 2 {
		t.Errorf("webhook name %q is not fully qualified", wh.Name)
	}
	if !bytes.Equal(wh.ClientConfig.CABundle, p.Certs.CAPEM) {
		t.Error("caBundle is not the CA")
	}
	ref := wh.ClientConfig.Service
	if ref == nil || ref.Name != svc.Name || ref.Namespace != svc.Namespace || *ref.Path != "/validate" || *ref.Port != 443 {
		t.Errorf("service reference = %+v, want %s/%s:443/validate", ref, svc.Namespace, svc.Name)
	}
	if *wh.FailurePolicy != admissionregistrationv1.Fail || *wh.SideEffects != admissionregistrationv1.SideEffectClassNone ||
		*wh.TimeoutSeconds != 5 || !slices.Equal(wh.AdmissionReviewVersions, []string{"v1"}) || wh.ObjectSelector != nil {
		t.Errorf("webhook failurePolicy=%s sideEffects=%s timeout=%d versions=%q objectSelector=%v",
			*wh.FailurePolicy, *wh.SideEffects, *wh.TimeoutSeconds, wh.AdmissionReviewVersions, wh.ObjectSelector)
	}
	sel := wh.NamespaceSelector
	if sel.MatchLabels["lab.cka/webhook"] != "on" {
		t.Errorf("namespaceSelector = %+v, want lab.cka/webhook=on", sel)
	}
	if e := sel.MatchExpressions; len(e) != 1 || e[0].Operator != metav1.LabelSelectorOpNotIn ||
		!slices.Equal(e[0].Values, []string{"kube-system", testNamespace}) {
		t.Errorf("namespaceSelector does not exclude kube-system and %s: %+v", testNamespace, e)
	}
	var covered []string
	for _, r := range wh.Rules {
		if !slices.Equal(r.Operations, []admissionregistrationv1.OperationType{"CREATE", "UPDATE"}) {
			t.Errorf("rule %v operations %v, want CREATE and UPDATE", r.Resources, r.Operations)
		}
		for _, res := range r.Resources {
			covered = append(covered, r.APIGroups[0]+"/"+res)
		}
	}
	for _, want := range []string{"/pods", "apps/deployments", "apps/statefulsets", "apps/daemonsets", "apps/replicasets", "batch/jobs"} {
		if !slices.Contains(covered, want) {
			t.Errorf("default rules miss %s (cover %v)", want, covered)
		}
	}
}

func labelsMatch(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

func TestObjectsOverrides(t *testing.T) {
	p := testParams(t)
	p.FailurePolicy = admissionregistrationv1.Ignore
	p.Replicas = 3
	p.Rules = []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}
	objs, err := Objects(p)
	if err != nil {
		t.Fatal(err)
	}
	_, dep, _, vwc := split(t, objs)
	wh := vwc.Webhooks[0]
	if *dep.Spec.Replicas != 3 || *wh.FailurePolicy != admissionregistrationv1.Ignore || !reflect.DeepEqual(wh.Rules, p.Rules) {
		t.Errorf("replicas=%d failurePolicy=%s rules=%+v; overrides not applied", *dep.Spec.Replicas, *wh.FailurePolicy, wh.Rules)
	}
}

// TestWebhookAdmitsItself guards against a webhook whose own Pods its policy
// would reject, which would leave a namespace it selects deadlocked.
func TestWebhookAdmitsItself(t *testing.T) {
	objs, err := Objects(testParams(t))
	if err != nil {
		t.Fatal(err)
	}
	_, dep, _, _ := split(t, objs)
	for _, spec := range []string{"require-limits", "deny-privileged", "require-label:app.kubernetes.io/managed-by", "allowed-registries:lab.local/"} {
		p, err := ParsePolicy(spec)
		if err != nil {
			t.Fatal(err)
		}
		if ok, msg := p.Review(admissionRequest(t, "apps", "Deployment", dep)); !ok {
			t.Errorf("%s denies the webhook's own Deployment: %s", spec, msg)
		}
	}
}

func TestObjectsValidates(t *testing.T) {
	for name, mutate := range map[string]func(*Params){
		"bad name":     func(p *Params) { p.Name = "Lab_Webhook" },
		"no namespace": func(p *Params) { p.Namespace = "" },
		"no image":     func(p *Params) { p.Image = "" },
		"bad policy":   func(p *Params) { p.Policy = "nope" },
		"no certs":     func(p *Params) { p.Certs = Certs{} },
	} {
		p := testParams(t)
		mutate(&p)
		if _, err := Objects(p); err == nil || !strings.HasPrefix(err.Error(), "webhook objects: ") {
			t.Errorf("%s: Objects error = %v, want a validation error", name, err)
		}
	}
}
