package webhook

import (
	"errors"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// managedByLabel marks every object lab creates so it can be found and removed.
	managedByLabel = "app.kubernetes.io/managed-by"
	managedByValue = "lab"
	nameLabel      = "app.kubernetes.io/name"

	servePort   = 8443 // matches DefaultAddr
	servicePort = 443
	tlsDir      = "/tls"
	tlsVolume   = "tls"
)

// Object is a typed Kubernetes object with metadata, what a client needs to
// create, label and later delete it.
type Object interface {
	metav1.Object
	runtime.Object
}

// Params describes one webhook deployment.
type Params struct {
	// Name names the Secret (<Name>-tls), Deployment, Service and
	// ValidatingWebhookConfiguration; it must be a DNS-1035 label because
	// it is a Service name.
	Name      string
	Namespace string
	Image     string // usually ImageTag of the lab binary, loaded onto the nodes
	Policy    string // passed to `lab webhook serve --policy`
	// FailurePolicy defaults to Fail, so an unreachable webhook also blocks.
	FailurePolicy admissionregistrationv1.FailurePolicyType
	// NamespaceSelector is matched as labels; empty selects every namespace.
	// kube-system and Namespace are always excluded (see namespaceSelector).
	NamespaceSelector map[string]string
	// Rules defaults to CREATE and UPDATE of pods and pod-template workloads.
	Rules    []admissionregistrationv1.RuleWithOperations
	Certs    Certs
	Replicas int32 // 0 means 1
	// Mutating registers the webhook in a MutatingWebhookConfiguration on
	// /mutate; it must be set exactly when the policy is a Mutator.
	Mutating bool
}

// Objects returns the Secret, Deployment, Service and
// ValidatingWebhookConfiguration (or MutatingWebhookConfiguration) for p, in creation order: the
// configuration should be created only once the Deployment is ready, or the
// webhook blocks requests while it cannot yet answer them.
func Objects(p Params) ([]Object, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("webhook objects: %w", err)
	}
	if p.Mutating {
		return []Object{p.secret(), p.deployment(), p.service(), p.mutatingWebhookConfiguration()}, nil
	}
	return []Object{p.secret(), p.deployment(), p.service(), p.webhookConfiguration()}, nil
}

func (p Params) validate() error {
	if errs := validation.IsDNS1035Label(p.Name); len(errs) > 0 {
		return fmt.Errorf("invalid name %q: %s", p.Name, strings.Join(errs, "; "))
	}
	if p.Namespace == "" || p.Image == "" {
		return errors.New("namespace and image are required")
	}
	pol, err := ParsePolicy(p.Policy)
	if err != nil {
		return err
	}
	if _, mutates := pol.(Mutator); mutates != p.Mutating {
		return fmt.Errorf("policy %s mutates=%t but the webhook is configured mutating=%t", pol.Name(), mutates, p.Mutating)
	}
	if len(p.Certs.CAPEM) == 0 || len(p.Certs.CertPEM) == 0 || len(p.Certs.KeyPEM) == 0 {
		return errors.New("certs are required (see NewServingCerts)")
	}
	return nil
}

func (p Params) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      name,
		Namespace: p.Namespace,
		Labels:    map[string]string{managedByLabel: managedByValue, nameLabel: p.Name},
	}
}

func (p Params) secret() *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: p.meta(p.Name + "-tls"),
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       p.Certs.CertPEM,
			corev1.TLSPrivateKeyKey: p.Certs.KeyPEM,
		},
	}
}

func (p Params) deployment() *appsv1.Deployment {
	replicas := p.Replicas
	if replicas == 0 {
		replicas = 1
	}
	yes, no := true, false
	// Limits keep the webhook admissible under its own require-limits policy.
	resources := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("10m"),
			corev1.ResourceMemory: resource.MustParse("32Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("200m"),
			corev1.ResourceMemory: resource.MustParse("128Mi"),
		},
	}
	container := corev1.Container{
		Name:            "webhook",
		Image:           p.Image,
		ImagePullPolicy: corev1.PullNever, // the image exists only on the nodes
		Args: []string{"webhook", "serve",
			"--cert", tlsDir + "/" + corev1.TLSCertKey,
			"--key", tlsDir + "/" + corev1.TLSPrivateKeyKey,
			"--policy", p.Policy},
		Ports: []corev1.ContainerPort{{Name: "https", ContainerPort: servePort}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/healthz", Port: intstr.FromInt32(servePort), Scheme: corev1.URISchemeHTTPS,
			}},
			PeriodSeconds: 2,
		},
		Resources:    resources,
		VolumeMounts: []corev1.VolumeMount{{Name: tlsVolume, MountPath: tlsDir, ReadOnly: true}},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: &no,
			ReadOnlyRootFilesystem:   &yes,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	podLabels := map[string]string{managedByLabel: managedByValue, nameLabel: p.Name}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: p.meta(p.Name),
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{nameLabel: p.Name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{container},
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   &yes,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Volumes: []corev1.Volume{{
						Name:         tlsVolume,
						VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: p.Name + "-tls"}},
					}},
				},
			},
		},
	}
}

func (p Params) service() *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: p.meta(p.Name),
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{nameLabel: p.Name},
			Ports: []corev1.ServicePort{{
				Name: "https", Port: servicePort, TargetPort: intstr.FromInt32(servePort),
			}},
		},
	}
}

func (p Params) webhookConfiguration() *admissionregistrationv1.ValidatingWebhookConfiguration {
	failure := p.FailurePolicy
	if failure == "" {
		failure = admissionregistrationv1.Fail
	}
	rules := p.Rules
	if rules == nil {
		rules = defaultRules()
	}
	none := admissionregistrationv1.SideEffectClassNone
	path, svcPort, timeout := "/validate", int32(servicePort), int32(5)
	meta := p.meta(p.Name)
	meta.Namespace = "" // cluster-scoped
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: meta,
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			// Webhook names must be fully qualified; this one is what
			// kubectl prints as `admission webhook "<name>" denied the request`.
			Name: p.Name + ".lab.local",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				Service:  &admissionregistrationv1.ServiceReference{Namespace: p.Namespace, Name: p.Name, Path: &path, Port: &svcPort},
				CABundle: p.Certs.CAPEM,
			},
			Rules:                   rules,
			FailurePolicy:           &failure,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          &timeout,
			NamespaceSelector:       p.namespaceSelector(),
		}},
	}
}

// namespaceSelector always excludes kube-system and the webhook's own
// namespace: with failurePolicy Fail the webhook must never block the Pods
// that serve it or the control plane, or the cluster cannot recover.
func (p Params) namespaceSelector() *metav1.LabelSelector {
	excluded := []string{metav1.NamespaceSystem}
	if p.Namespace != metav1.NamespaceSystem {
		excluded = append(excluded, p.Namespace)
	}
	return &metav1.LabelSelector{
		MatchLabels: p.NamespaceSelector,
		MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key:      corev1.LabelMetadataName,
			Operator: metav1.LabelSelectorOpNotIn,
			Values:   excluded,
		}},
	}
}

// defaultRules covers Pods and every built-in kind with a pod template, so
// a fault shows up wherever the student creates the workload.
func defaultRules() []admissionregistrationv1.RuleWithOperations {
	scope := admissionregistrationv1.NamespacedScope
	rule := func(group string, resources ...string) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: resources, Scope: &scope,
			},
		}
	}
	return []admissionregistrationv1.RuleWithOperations{
		rule("", "pods"),
		rule("apps", "deployments", "statefulsets", "daemonsets", "replicasets"),
		rule("batch", "jobs", "cronjobs"),
	}
}

// mutatingWebhookConfiguration registers a Mutator on /mutate for Pod
// creates: mutation is only ever applied to new Pods (see sidecar.Mutate).
func (p Params) mutatingWebhookConfiguration() *admissionregistrationv1.MutatingWebhookConfiguration {
	v := p.webhookConfiguration().Webhooks[0]
	path := "/mutate"
	v.ClientConfig.Service.Path = &path
	rules := p.Rules
	if rules == nil {
		scope := admissionregistrationv1.NamespacedScope
		rules = []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}, Scope: &scope},
		}}
	}
	never := admissionregistrationv1.NeverReinvocationPolicy
	meta := p.meta(p.Name)
	meta.Namespace = "" // cluster-scoped
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: meta,
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    v.Name,
			ClientConfig:            v.ClientConfig,
			Rules:                   rules,
			FailurePolicy:           v.FailurePolicy,
			SideEffects:             v.SideEffects,
			AdmissionReviewVersions: v.AdmissionReviewVersions,
			TimeoutSeconds:          v.TimeoutSeconds,
			NamespaceSelector:       v.NamespaceSelector,
			ReinvocationPolicy:      &never,
		}},
	}
}
