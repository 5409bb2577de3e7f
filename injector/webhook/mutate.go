package webhook

import (
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Mutator is a policy that changes what it admits: it is served on /mutate
// and registered in a MutatingWebhookConfiguration.
type Mutator interface {
	Policy
	// Mutate returns a JSON patch (RFC 6902) for req's object, nil to leave
	// it as it is.
	Mutate(req *admissionv1.AdmissionRequest) ([]byte, error)
}

// Mutates reports whether the policy spec names a mutating policy.
func Mutates(spec string) (bool, error) {
	p, err := ParsePolicy(spec)
	if err != nil {
		return false, err
	}
	_, ok := p.(Mutator)
	return ok, nil
}

// The sidecar injector's contract with Pods, as service meshes and log
// shippers have it: a fixed container name, and an annotation to opt out.
const (
	SidecarName         = "log-agent"
	SidecarOptOutAnnot  = "sidecar.lab.local/inject"
	sidecarOptOutValue  = "false"
	sidecarShellCommand = "trap 'exit 0' TERM; while sleep 1; do :; done"
)

// sidecar injects a log-agent container running image into every Pod it
// admits on create.
type sidecar struct{ image string }

func (s sidecar) Name() string { return "inject-sidecar:" + s.image }

// Review admits everything: the injector changes Pods, it does not judge them.
func (s sidecar) Review(*admissionv1.AdmissionRequest) (bool, string) { return true, "" }

func (s sidecar) Mutate(req *admissionv1.AdmissionRequest) ([]byte, error) {
	// Containers cannot be added to an existing Pod, so only creates are touched.
	if req == nil || req.Operation != admissionv1.Create || req.Kind.Group != "" || req.Kind.Kind != "Pod" || req.SubResource != "" {
		return nil, nil
	}
	var pod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		return nil, fmt.Errorf("cannot decode Pod %s/%s: %w", req.Namespace, req.Name, err)
	}
	if pod.Annotations[SidecarOptOutAnnot] == sidecarOptOutValue {
		return nil, nil
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == SidecarName {
			return nil, nil
		}
	}
	c := corev1.Container{
		Name:    SidecarName,
		Image:   s.image,
		Command: []string{"sh", "-c", sidecarShellCommand},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5m"), corev1.ResourceMemory: resource.MustParse("8Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
		},
	}
	patch := []map[string]any{{"op": "add", "path": "/spec/containers/-", "value": c}}
	return json.Marshal(patch)
}
