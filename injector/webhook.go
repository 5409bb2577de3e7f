package injector

import (
	"context"
	"fmt"
	"os"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/cka-lab/lab/images"
	"github.com/cka-lab/lab/injector/webhook"
	"github.com/cka-lab/lab/kube"
	"github.com/cka-lab/lab/scenarios"
)

// webhook deploys lab's own admission webhook server: the image is lab's binary, loaded into the nodes
// without any registry, serving TLS with a CA made for this attempt.
func (i *Injector) webhook(ctx context.Context, w *scenarios.WebhookFault) error {
	image, err := i.ensureWebhookImage(ctx)
	if err != nil {
		return err
	}
	certs, err := webhook.NewServingCerts(w.Name, w.Namespace, 24*time.Hour)
	if err != nil {
		return err
	}
	fp := admissionregistrationv1.Fail
	if w.FailurePolicy == "Ignore" {
		fp = admissionregistrationv1.Ignore
	}
	objs, err := webhook.Objects(webhook.Params{
		Name: w.Name, Namespace: w.Namespace, Image: image, Policy: w.Policy, FailurePolicy: fp,
		NamespaceSelector: w.NamespaceSelector, Certs: certs,
	})
	if err != nil {
		return err
	}
	ns := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels: {app.kubernetes.io/managed-by: lab}\n", w.Namespace)
	if err := i.apply(ctx, ns, false); err != nil {
		return err
	}
	down := w.Replicas != nil && *w.Replicas == 0
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok && down {
			// The "service down" variant: the configuration stays, nothing answers it.
			zero := int32(0)
			d.Spec.Replicas = &zero
		}
		if _, ok := o.(*admissionregistrationv1.ValidatingWebhookConfiguration); ok && !down {
			if err := i.waitAvailable(ctx, w.Namespace, w.Name); err != nil {
				return err
			}
		}
		if err := i.applyTyped(ctx, o); err != nil {
			return err
		}
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
		return fmt.Errorf("webhook server %s/%s did not become available: %w", ns, name, err)
	}
	return nil
}

// ensureWebhookImage loads the image built from this lab binary into every node that lacks it.
func (i *Injector) ensureWebhookImage(ctx context.Context) (string, error) {
	image, err := webhook.ImageTag(i.env.Self)
	if err != nil {
		return "", err
	}
	ns, err := i.env.Nodes()
	if err != nil {
		return "", err
	}
	var need []nodes.Node
	for _, n := range ns {
		if id, err := nodeutils.ImageID(n, image); err != nil || id == "" {
			need = append(need, n)
		}
	}
	if len(need) == 0 {
		return image, nil
	}
	f, err := os.CreateTemp("", "lab-webhook-*.tar")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := webhook.BuildImage(i.env.Self, image, f); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	if err := images.LoadArchiveFile(ctx, need, f.Name(), image); err != nil {
		return "", err
	}
	return image, nil
}
