package grader

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func init() {
	Register("operatorReconciled", operatorReconciled)
	Register("manifestApplied", manifestApplied)
}

// served resolves a resource the API server serves, reading discovery again once for one it did not know (a
// CRD created since).
func (e Env) served(gr schema.GroupResource) (schema.GroupVersionResource, error) {
	gvr, err := e.Clients.Mapper.ResourceFor(gr.WithVersion(""))
	if err != nil {
		e.Clients.Mapper.Reset()
		if gvr, err = e.Clients.Mapper.ResourceFor(gr.WithVersion("")); err != nil {
			return gvr, fmt.Errorf("the API server does not serve %s: %w", gr, err)
		}
	}
	return gvr, nil
}

// operatorReconciled: the custom object args.name in args.namespace, of args.resource (plural.group), is
// reconciled by its operator, which Kubernetes shows in three places: its status reports the current
// generation observed and a Ready condition that is True, and the Deployment of the same name is controlled by
// it (its controller owner reference names the object's uid) and has rolled out the replicas it asks for. A
// Deployment made by hand with the right name and image has no such owner, and an object no operator reads has
// no such status.
func operatorReconciled(ctx context.Context, e Env, args map[string]string) Result {
	ns, name := args["namespace"], args["name"]
	gr := schema.ParseGroupResource(args["resource"])
	gvr, err := e.served(gr)
	if err != nil {
		return e.fail("%v", err)
	}
	o, err := e.Clients.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return e.fail("%s %s does not exist in %s", gr, name, ns)
	}
	if err != nil {
		return e.fail("read %s %s in %s: %v", gr, name, ns, err)
	}
	what := fmt.Sprintf("%s %s/%s", o.GetKind(), ns, name)
	observed, found, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
	if !found {
		return e.fail("%s has no status: no operator has reconciled it (its operator's log says why)", what)
	}
	if observed < o.GetGeneration() {
		return e.fail("%s is at generation %d, and its operator last reconciled generation %d", what, o.GetGeneration(), observed)
	}
	if status, reason, message := condition(o.Object, "Ready"); status != string(metav1.ConditionTrue) {
		return e.fail("%s reports Ready=%s (%s: %s)", what, status, reason, message)
	}
	d, err := e.Clients.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return e.fail("%s has no Deployment %s", what, name)
	}
	if err != nil {
		return e.fail("read Deployment %s/%s: %v", ns, name, err)
	}
	if c := metav1.GetControllerOf(d); c == nil || c.UID != o.GetUID() {
		return e.fail("Deployment %s/%s is not controlled by %s (its controller owner reference is %s): its operator did not create it", ns, name, what, ownerName(c))
	}
	want, found, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	st := d.Status
	if d.Spec.Replicas == nil || int64(*d.Spec.Replicas) != want || st.ObservedGeneration < d.Generation ||
		int64(st.UpdatedReplicas) != want || int64(st.AvailableReplicas) != want || int64(st.Replicas) != want {
		return e.fail("Deployment %s/%s has %d of the %d replicas %s asks for available at its current revision", ns, name, st.AvailableReplicas, want, what)
	}
	return pass("%s is Ready at generation %d, and controls Deployment %s with its %d replicas available", what, observed, name, want)
}

// condition reads the status condition of type t of an object ("Unknown" when it has none).
func condition(obj map[string]any, t string) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == t {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["reason"]), fmt.Sprint(m["message"])
		}
	}
	return "Unknown", "NoCondition", "no " + t + " condition in its status"
}

func ownerName(r *metav1.OwnerReference) string {
	if r == nil {
		return "none"
	}
	return r.Kind + " " + r.Name
}

// manifestApplied: the manifest file args.path on args.node is the source of truth for what it states: it
// decodes, and every object in it is live as stated (a server-side dry-run apply changes nothing), however it
// was applied. A file the API server would still refuse fails, as does an object changed by hand afterwards.
func manifestApplied(ctx context.Context, e Env, args map[string]string) Result {
	return sourceLive(ctx, e, args["node"], args["path"], "states", "cat", args["path"])
}
