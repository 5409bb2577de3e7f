// Package operator is the small operator lab runs in a cluster for the scenarios about custom resources and
// operators: it reconciles every object of one custom resource into a Deployment and a Service of the same
// name, which the object controls, and reports what it did in the object's status (observedGeneration,
// readyReplicas and a Ready condition), as operators built with controller-runtime do. It runs as lab's own
// binary in lab's image, so it needs no registry.
package operator

import (
	"context"
	"fmt"
	"log"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	appsapply "k8s.io/client-go/applyconfigurations/apps/v1"
	coreapply "k8s.io/client-go/applyconfigurations/core/v1"
	metaapply "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// DefaultInterval is the period lab runs its operator with; the grader waits a few of them for a repaired
// operator to act.
const DefaultInterval = 2 * time.Second

// Options say what the operator reconciles and who it is.
type Options struct {
	// Resource is the custom resource as plural.version.group ("webapps.v1.platform.example.com").
	Resource string
	// Name is the operator's field manager and the app.kubernetes.io/managed-by label of what it creates.
	Name string
	// Interval is how often every object is reconciled again: a fixed, short period keeps a repaired
	// permission or a changed object taking effect within seconds, with no backoff to wait out.
	Interval time.Duration
}

// Spec is what the operator reads of an object: the image, how many replicas, and the port the application
// listens on (the Service's port too).
type Spec struct {
	Image    string
	Replicas int32
	Port     int32
}

// ReadyCondition is the condition the operator sets on every object it reconciles.
const ReadyCondition = "Ready"

// Serve reconciles until ctx ends, with the Pod's service account.
func Serve(ctx context.Context, o Options) error {
	gvr, _ := schema.ParseResourceArg(o.Resource)
	if gvr == nil || gvr.Version == "" {
		return fmt.Errorf("--resource %q: want plural.version.group, as webapps.v1.platform.example.com", o.Resource)
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return fmt.Errorf("operator: %w", err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	r := &reconciler{gvr: *gvr, name: o.Name, objects: dc.Resource(*gvr), kube: kc}
	log.Printf("%s reconciles %s every %s, and at once when one of them or a Deployment it made changes", o.Name, gvr.GroupResource(), o.Interval)
	// A change to an object or to a Deployment it made starts a pass at once, as controller-runtime's
	// watches do: a rollout's end shows as Ready within milliseconds, not at the next period.
	changed := make(chan struct{}, 1)
	owned := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=" + o.Name}
	go follow(ctx, o.Interval, changed, func(ctx context.Context) (watch.Interface, error) {
		return r.objects.Watch(ctx, metav1.ListOptions{})
	})
	go follow(ctx, o.Interval, changed, func(ctx context.Context) (watch.Interface, error) {
		return kc.AppsV1().Deployments("").Watch(ctx, owned)
	})
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	for {
		r.pass(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-changed:
		}
	}
}

// follow signals changed on every event of the watches start opens, one after another until ctx ends; a watch
// that cannot start (forbidden until its RBAC is repaired) is tried again each interval.
func follow(ctx context.Context, interval time.Duration, changed chan<- struct{}, start func(context.Context) (watch.Interface, error)) {
	for ctx.Err() == nil {
		w, err := start(ctx)
		if err == nil {
			for range w.ResultChan() {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
			w.Stop()
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

type reconciler struct {
	gvr     schema.GroupVersionResource
	name    string
	objects dynamic.NamespaceableResourceInterface
	kube    kubernetes.Interface
}

// pass reconciles every object once; errors go to the log, where a learner reads them with kubectl logs.
func (r *reconciler) pass(ctx context.Context) {
	list, err := r.objects.List(ctx, metav1.ListOptions{})
	if err != nil {
		log.Printf("list %s: %v", r.gvr.GroupResource(), err)
		return
	}
	for i := range list.Items {
		o := &list.Items[i]
		if err := r.reconcile(ctx, o); err != nil {
			log.Printf("reconcile %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

func (r *reconciler) reconcile(ctx context.Context, o *unstructured.Unstructured) error {
	spec, err := ReadSpec(o)
	if err != nil {
		return r.report(ctx, o, nil, err)
	}
	owner := metaapply.OwnerReference().WithAPIVersion(o.GetAPIVersion()).WithKind(o.GetKind()).
		WithName(o.GetName()).WithUID(o.GetUID()).WithController(true).WithBlockOwnerDeletion(true)
	apply := metav1.ApplyOptions{FieldManager: r.name, Force: true}
	d, err := r.kube.AppsV1().Deployments(o.GetNamespace()).Apply(ctx, Deployment(o.GetNamespace(), o.GetName(), r.name, spec).WithOwnerReferences(owner), apply)
	if err != nil {
		return r.report(ctx, o, nil, fmt.Errorf("apply Deployment %s: %w", o.GetName(), err))
	}
	if _, err := r.kube.CoreV1().Services(o.GetNamespace()).Apply(ctx, Service(o.GetNamespace(), o.GetName(), r.name, spec).WithOwnerReferences(owner), apply); err != nil {
		return r.report(ctx, o, d, fmt.Errorf("apply Service %s: %w", o.GetName(), err))
	}
	return r.report(ctx, o, d, nil)
}

// ReadSpec reads the object's spec; the CRD's schema is the real validation, this only refuses what the
// operator cannot run.
func ReadSpec(o *unstructured.Unstructured) (Spec, error) {
	image, _, _ := unstructured.NestedString(o.Object, "spec", "image")
	if image == "" {
		return Spec{}, fmt.Errorf("spec.image is empty")
	}
	s := Spec{Image: image, Replicas: 1, Port: 80}
	if v, found, err := unstructured.NestedInt64(o.Object, "spec", "replicas"); err != nil {
		return Spec{}, fmt.Errorf("spec.replicas: %w", err)
	} else if found {
		s.Replicas = int32(v)
	}
	if v, found, err := unstructured.NestedInt64(o.Object, "spec", "port"); err != nil {
		return Spec{}, fmt.Errorf("spec.port: %w", err)
	} else if found {
		s.Port = int32(v)
	}
	return s, nil
}

func labels(name, manager string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": manager}
}

// Deployment is what the operator makes of an object: its replicas of its image, listening on its port.
func Deployment(ns, name, manager string, s Spec) *appsapply.DeploymentApplyConfiguration {
	l := labels(name, manager)
	return appsapply.Deployment(name, ns).WithLabels(l).WithSpec(appsapply.DeploymentSpec().
		WithReplicas(s.Replicas).
		WithSelector(metaapply.LabelSelector().WithMatchLabels(map[string]string{"app.kubernetes.io/name": name})).
		WithTemplate(coreapply.PodTemplateSpec().WithLabels(l).WithSpec(coreapply.PodSpec().
			WithContainers(coreapply.Container().WithName("app").WithImage(s.Image).
				WithPorts(coreapply.ContainerPort().WithName("http").WithContainerPort(s.Port))))))
}

// Service exposes the object's Pods on its port.
func Service(ns, name, manager string, s Spec) *coreapply.ServiceApplyConfiguration {
	return coreapply.Service(name, ns).WithLabels(labels(name, manager)).WithSpec(coreapply.ServiceSpec().
		WithSelector(map[string]string{"app.kubernetes.io/name": name}).
		WithPorts(coreapply.ServicePort().WithName("http").WithPort(s.Port).WithTargetPort(intstr.FromString("http"))))
}

// report writes the object's status when it changed: Ready once the Deployment has rolled out all its
// replicas at its current generation, with the reason otherwise.
func (r *reconciler) report(ctx context.Context, o *unstructured.Unstructured, d *appsv1.Deployment, failure error) error {
	st := Status(o, d, failure)
	old, _, _ := unstructured.NestedMap(o.Object, "status")
	if equalStatus(old, st) {
		return failure
	}
	u := o.DeepCopy()
	if err := unstructured.SetNestedField(u.Object, st, "status"); err != nil {
		return err
	}
	if _, err := r.objects.Namespace(o.GetNamespace()).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: r.name}); err != nil && !apierrors.IsConflict(err) {
		if failure != nil {
			return fmt.Errorf("%w; and update its status: %v", failure, err)
		}
		return fmt.Errorf("update status: %w", err)
	}
	return failure
}

// Status is the status the operator reports for the object, keeping the Ready condition's transition time
// when its status did not change.
func Status(o *unstructured.Unstructured, d *appsv1.Deployment, failure error) map[string]any {
	var conds []metav1.Condition
	raw, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, item := range raw {
		var c metav1.Condition
		if m, ok := item.(map[string]any); ok && runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			conds = append(conds, c)
		}
	}
	c := metav1.Condition{Type: ReadyCondition, ObservedGeneration: o.GetGeneration(), LastTransitionTime: metav1.Now()}
	var ready int32
	switch {
	case failure != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "ReconcileFailed", failure.Error()
	case d == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "Progressing", "the Deployment is being created"
	default:
		ready = d.Status.ReadyReplicas
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		if d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas == want && d.Status.Replicas == want {
			c.Status, c.Reason, c.Message = metav1.ConditionTrue, "Available", fmt.Sprintf("%d of %d replicas available", want, want)
		} else {
			c.Status, c.Reason, c.Message = metav1.ConditionFalse, "Progressing", fmt.Sprintf("%d of %d replicas available", d.Status.AvailableReplicas, want)
		}
	}
	meta.SetStatusCondition(&conds, c)
	list := make([]any, 0, len(conds))
	for _, cond := range conds {
		m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&cond)
		list = append(list, m)
	}
	return map[string]any{"observedGeneration": o.GetGeneration(), "readyReplicas": int64(ready), "conditions": list}
}

// equalStatus compares statuses as the API server stores them (numbers as int64 either way).
func equalStatus(a, b map[string]any) bool {
	if a == nil {
		return false
	}
	ua, ub := &unstructured.Unstructured{Object: map[string]any{"s": a}}, &unstructured.Unstructured{Object: map[string]any{"s": b}}
	ja, err1 := ua.MarshalJSON()
	jb, err2 := ub.MarshalJSON()
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
