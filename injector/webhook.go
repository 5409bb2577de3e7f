package injector

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/cka-lab/lab/injector/webhook"
	"github.com/cka-lab/lab/internal/cluster/images"
	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/state"
	"github.com/cka-lab/lab/scenarios"
)

// webhook deploys lab's own admission webhook server (validating or mutating): the image is lab's binary, loaded into the nodes
// without any registry, serving TLS with a CA made for this attempt.
func (i *Injector) webhook(ctx context.Context, w *scenarios.WebhookFault) error {
	image, err := i.ensureLabImage(ctx)
	if err != nil {
		return err
	}
	certs, err := webhook.NewServingCerts(w.Name, w.Namespace, 24*time.Hour)
	if err != nil {
		return err
	}
	if err := i.keep(w.Name, certs); err != nil {
		return err
	}
	fp := admissionregistrationv1.Fail
	if w.FailurePolicy == "Ignore" {
		fp = admissionregistrationv1.Ignore
	}
	objs, err := webhook.Objects(webhook.Params{
		Name: w.Name, Namespace: w.Namespace, Image: image, Policy: w.Policy, FailurePolicy: fp,
		NamespaceSelector: w.NamespaceSelector, Certs: certs, Rules: rules(w.Resources, w.Mutating), Mutating: w.Mutating,
	})
	if err != nil {
		return err
	}
	ns := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels: {app.kubernetes.io/managed-by: lab}\n", w.Namespace)
	if err := i.apply(ctx, &scenarios.ApplyFault{Manifest: ns}); err != nil {
		return err
	}
	down := w.Replicas != nil && *w.Replicas == 0
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok && down {
			// The "service down" variant: the configuration stays, nothing answers it.
			zero := int32(0)
			d.Spec.Replicas = &zero
		}
		if isWebhookConfiguration(o) && !down {
			if err := i.waitAvailable(ctx, w.Namespace, w.Name); err != nil {
				return err
			}
		}
		if err := i.applyTyped(ctx, o); err != nil {
			return err
		}
	}
	if down {
		return nil
	}
	return i.waitAnswering(ctx, w)
}

// keep writes the webhook's CA, certificate and key into lab's state directory, the only place outside the
// cluster they exist, so an instructor can inspect them and nothing leaks to /tmp.
func (i *Injector) keep(name string, c webhook.Certs) error {
	if i.env.SecretsDir == "" {
		return nil
	}
	for file, data := range map[string][]byte{"ca.crt": c.CAPEM, "tls.crt": c.CertPEM, "tls.key": c.KeyPEM} {
		if err := state.WriteFile(filepath.Join(i.env.SecretsDir, name, file), data); err != nil {
			return fmt.Errorf("keep webhook credentials: %w", err)
		}
	}
	return nil
}

// isWebhookConfiguration reports the object that makes the API server call the webhook.
func isWebhookConfiguration(o webhook.Object) bool {
	switch o.(type) {
	case *admissionregistrationv1.ValidatingWebhookConfiguration, *admissionregistrationv1.MutatingWebhookConfiguration:
		return true
	}
	return false
}

// rules turns "resource[.group]" names into webhook rules; nil keeps the webhook's defaults. A mutating
// webhook only sees creates: it may add to a new object, never rewrite a stored one.
func rules(resources []string, mutating bool) []admissionregistrationv1.RuleWithOperations {
	if len(resources) == 0 {
		return nil
	}
	byGroup := map[string][]string{}
	var groups []string
	for _, r := range resources {
		name, group, _ := strings.Cut(r, ".")
		if _, seen := byGroup[group]; !seen {
			groups = append(groups, group)
		}
		byGroup[group] = append(byGroup[group], name)
	}
	scope := admissionregistrationv1.NamespacedScope
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	if mutating {
		ops = ops[:1]
	}
	var out []admissionregistrationv1.RuleWithOperations
	for _, g := range groups {
		out = append(out, admissionregistrationv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{g}, APIVersions: []string{"v1"}, Resources: byGroup[g], Scope: &scope},
		})
	}
	return out
}

// waitAnswering waits until the API server reaches the webhook: a Service's endpoints become routable a moment
// after its Pod is ready, and a fault applied before that would fail with "connection refused" instead of the
// policy's answer. The probe is a dry-run Pod in a namespace the webhook selects.
func (i *Injector) waitAnswering(ctx context.Context, w *scenarios.WebhookFault) error {
	nsl, err := i.env.Clients.Kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(w.NamespaceSelector).String()})
	if err != nil || len(nsl.Items) == 0 {
		return err
	}
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "lab-webhook-probe", Namespace: nsl.Items[0].Name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "lab.local/probe"}}},
	}
	var last error
	err = kube.Poll(ctx, 250*time.Millisecond, waitTimeout, func(ctx context.Context) (bool, error) {
		_, last = i.env.Clients.Kube.CoreV1().Pods(probe.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return !kube.WebhookNotCalled(last), nil
	})
	if err != nil {
		return fmt.Errorf("webhook %s does not answer the API server: %v: %w", w.Name, last, err)
	}
	return nil
}

func (i *Injector) applyTyped(ctx context.Context, o webhook.Object) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	gvks, _, err := clientgoscheme.Scheme.ObjectKinds(o)
	if err != nil {
		return err
	}
	u.SetGroupVersionKind(gvks[0])
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	if err := i.recordObject(ctx, refOf(u)); err != nil {
		return err
	}
	return i.env.Clients.Apply(ctx, []*unstructured.Unstructured{u})
}

func (i *Injector) waitAvailable(ctx context.Context, ns, name string) error {
	err := kube.Poll(ctx, 300*time.Millisecond, waitTimeout, func(ctx context.Context) (bool, error) {
		d, err := i.env.Clients.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && d.Status.AvailableReplicas > 0, nil
	})
	if err != nil {
		return fmt.Errorf("deployment %s/%s did not become available: %w", ns, name, err)
	}
	return nil
}

// ensureLabImage loads the image built from this lab binary (the webhook's and the operator's) into every node
// that lacks it.
func (i *Injector) ensureLabImage(ctx context.Context) (string, error) {
	image, err := webhook.ImageTag(i.env.Self)
	if err != nil {
		return "", err
	}
	ns, err := i.env.Nodes()
	if err != nil {
		return "", err
	}
	return image, images.EnsureBinary(ctx, ns, webhook.Image(i.env.Self, image))
}
