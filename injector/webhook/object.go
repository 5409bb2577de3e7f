package webhook

import (
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// object is the part of an admitted object that policies look at. Reducing
// Pods and every pod-template workload to one shape keeps each policy a few
// lines long.
type object struct {
	kind string
	meta metav1.ObjectMeta
	// podMeta is the pod template's metadata; nil for Pods and for objects
	// without a pod template.
	podMeta *metav1.ObjectMeta
	// spec is the pod (template) spec; nil for objects that run no pods.
	spec *corev1.PodSpec
}

// decodeObject decodes req.Object according to req.Kind. Kinds that run no
// pods decode as bare metadata so label policies still apply to them.
func decodeObject(req *admissionv1.AdmissionRequest) (object, error) {
	raw := req.Object.Raw
	o := object{kind: req.Kind.Kind}
	var err error
	switch req.Kind.Group + "/" + req.Kind.Kind {
	case "/Pod":
		var p corev1.Pod
		err = json.Unmarshal(raw, &p)
		o.meta, o.spec = p.ObjectMeta, &p.Spec
	case "apps/Deployment":
		var d appsv1.Deployment
		err = json.Unmarshal(raw, &d)
		o.meta, o.podMeta, o.spec = d.ObjectMeta, &d.Spec.Template.ObjectMeta, &d.Spec.Template.Spec
	case "apps/StatefulSet":
		var s appsv1.StatefulSet
		err = json.Unmarshal(raw, &s)
		o.meta, o.podMeta, o.spec = s.ObjectMeta, &s.Spec.Template.ObjectMeta, &s.Spec.Template.Spec
	case "apps/DaemonSet":
		var d appsv1.DaemonSet
		err = json.Unmarshal(raw, &d)
		o.meta, o.podMeta, o.spec = d.ObjectMeta, &d.Spec.Template.ObjectMeta, &d.Spec.Template.Spec
	case "apps/ReplicaSet":
		var r appsv1.ReplicaSet
		err = json.Unmarshal(raw, &r)
		o.meta, o.podMeta, o.spec = r.ObjectMeta, &r.Spec.Template.ObjectMeta, &r.Spec.Template.Spec
	case "batch/Job":
		var j batchv1.Job
		err = json.Unmarshal(raw, &j)
		o.meta, o.podMeta, o.spec = j.ObjectMeta, &j.Spec.Template.ObjectMeta, &j.Spec.Template.Spec
	case "batch/CronJob":
		var c batchv1.CronJob
		err = json.Unmarshal(raw, &c)
		t := &c.Spec.JobTemplate.Spec.Template
		o.meta, o.podMeta, o.spec = c.ObjectMeta, &t.ObjectMeta, &t.Spec
	default:
		var m metav1.PartialObjectMetadata
		err = json.Unmarshal(raw, &m)
		o.meta = m.ObjectMeta
	}
	if err != nil {
		return object{}, fmt.Errorf("cannot decode %s %s/%s: %w", req.Kind.Kind, req.Namespace, req.Name, err)
	}
	return o, nil
}

// desc names the object for messages, e.g. `Deployment "web"`. Pods made by
// controllers have only a generateName at admission time.
func (o object) desc() string {
	name := o.meta.Name
	if name == "" {
		name = o.meta.GenerateName
	}
	return fmt.Sprintf("%s %q", o.kind, name)
}

// namedContainer is a container with the phrase that identifies it in messages.
type namedContainer struct {
	corev1.Container
	desc string
}

// containers lists init containers first, in the order the kubelet runs them.
func (o object) containers() []namedContainer {
	if o.spec == nil {
		return nil
	}
	var out []namedContainer
	for _, c := range o.spec.InitContainers {
		out = append(out, namedContainer{Container: c, desc: fmt.Sprintf("init container %q", c.Name)})
	}
	for _, c := range o.spec.Containers {
		out = append(out, namedContainer{Container: c, desc: fmt.Sprintf("container %q", c.Name)})
	}
	return out
}
