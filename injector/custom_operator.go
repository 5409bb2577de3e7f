package injector

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/injector/webhook"
)

func init() {
	Register("operator", deployOperator)
}

// deployOperator runs lab's operator (internal/operator) for the custom resource args resource
// (plural.version.group) as the Deployment and ServiceAccount args name in args namespace, a namespace the
// scenario created, and waits until it runs. What it may do is the scenario's data: its ClusterRole and binding
// for that ServiceAccount, where a scenario puts its fault.
func deployOperator(ctx context.Context, i *Injector, args map[string]string) error {
	ns, name := args["namespace"], args["name"]
	if err := i.ownNamespace(ns, "operator"); err != nil {
		return err
	}
	image, err := i.ensureLabImage(ctx)
	if err != nil {
		return err
	}
	for _, o := range operatorObjects(ns, name, args["resource"], image) {
		if err := i.applyTyped(ctx, o); err != nil {
			return err
		}
	}
	if err := i.waitAvailable(ctx, ns, name); err != nil {
		return fmt.Errorf("operator: %w", err)
	}
	return nil
}

// operatorObjects are the operator's ServiceAccount and Deployment, as a team would run an operator: one
// replica, non-root, read-only root filesystem, small requests and limits.
func operatorObjects(ns, name, gvr, image string) []webhook.Object {
	yes, no, one := true, false, int32(1)
	l := map[string]string{"app.kubernetes.io/name": name}
	meta := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: l}
	return []webhook.Object{
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta},
		&appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{
				Replicas: &one,
				Selector: &metav1.LabelSelector{MatchLabels: l},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: l},
					Spec: corev1.PodSpec{
						ServiceAccountName: name,
						Containers: []corev1.Container{{
							Name:            "manager",
							Image:           image,
							ImagePullPolicy: corev1.PullNever, // the image exists only on the nodes
							Args:            []string{"operator", "--resource", gvr, "--name", name},
							Resources: corev1.ResourceRequirements{
								Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
								Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
							},
							SecurityContext: &corev1.SecurityContext{
								AllowPrivilegeEscalation: &no,
								ReadOnlyRootFilesystem:   &yes,
								Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							},
						}},
						SecurityContext: &corev1.PodSecurityContext{
							RunAsNonRoot:   &yes,
							SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
					},
				},
			},
		},
	}
}
