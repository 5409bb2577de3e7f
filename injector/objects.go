package injector

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/manifest"
	"github.com/cka-lab/lab/internal/namespace"
	"github.com/cka-lab/lab/scenarios"
)

func refOf(u *unstructured.Unstructured) scenarios.ObjectRef {
	return scenarios.ObjectRef{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

func stub(r scenarios.ObjectRef) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(r.APIVersion)
	u.SetKind(r.Kind)
	u.SetNamespace(r.Namespace)
	u.SetName(r.Name)
	return u
}

// recordObject stores the object's current state (or its absence) in the ledger.
func (i *Injector) recordObject(ctx context.Context, r scenarios.ObjectRef) error {
	e := Entry{Object: &ObjectPrior{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}}
	if i.ledger.Has(e) {
		return nil
	}
	live, err := i.env.Clients.Get(ctx, stub(r))
	if err != nil {
		return fmt.Errorf("read %s before changing it: %w", r, err)
	}
	e.Object.Prior = json.RawMessage("null")
	if live != nil {
		clean(live)
		b, err := json.Marshal(live.Object)
		if err != nil {
			return err
		}
		e.Object.Prior = b
	}
	return i.ledger.Record(e)
}

// clean drops what the API server owns, so a prior object can be written back.
func clean(u *unstructured.Unstructured) {
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(u.Object, "status")
}

func (i *Injector) apply(ctx context.Context, f *scenarios.ApplyFault) error {
	objs, err := manifest.Decode([]byte(f.Manifest))
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := i.recordObject(ctx, refOf(o)); err != nil {
			return err
		}
		if err := i.env.Clients.Apply(ctx, []*unstructured.Unstructured{o}); err != nil {
			return err
		}
		switch o.GetKind() {
		case "CustomResourceDefinition":
			if err := i.waitEstablished(ctx, o.GetName()); err != nil {
				return err
			}
		case "ResourceQuota":
			if err := i.waitEnforced(ctx, o); err != nil {
				return err
			}
		}
	}
	if f.Bound {
		if err := i.waitBound(ctx, objs); err != nil {
			return err
		}
	}
	if f.Ready {
		return i.waitReady(ctx, objs)
	}
	if f.Wait {
		return i.waitForPods(ctx, objs)
	}
	return nil
}

// waitEstablished waits until the API server serves a new CustomResourceDefinition's resource, so the next
// object of the manifest may be one.
func (i *Injector) waitEstablished(ctx context.Context, name string) error {
	crd := scenarios.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: name}
	if err := i.waitCondition(ctx, crd, "Established"); err != nil {
		return err
	}
	i.env.Clients.Mapper.Reset()
	return nil
}

// waitEnforced waits until the quota controller has computed a new ResourceQuota's status: admission
// enforces only the resources listed in status.hard, so a Pod created before that is let in whatever it
// requests (a clean CI run saw a Deployment's Pods admitted past a quota the controller had not yet counted).
func (i *Injector) waitEnforced(ctx context.Context, quota *unstructured.Unstructured) error {
	want, _, _ := unstructured.NestedMap(quota.Object, "spec", "hard")
	return i.waitLive(ctx, refOf(quota), "counted by the quota controller", func(live *unstructured.Unstructured) bool {
		return quotaEnforced(want, live)
	})
}

// quotaEnforced says whether a live quota's status lists every resource its spec caps, and its usage.
func quotaEnforced(hard map[string]any, live *unstructured.Unstructured) bool {
	status, _, _ := unstructured.NestedMap(live.Object, "status", "hard")
	used, _, _ := unstructured.NestedMap(live.Object, "status", "used")
	for r := range hard {
		if _, ok := status[r]; !ok {
			return false
		}
		if _, ok := used[r]; !ok {
			return false
		}
	}
	return true
}

// waitCondition waits until the object's status has the condition t with status True.
func (i *Injector) waitCondition(ctx context.Context, r scenarios.ObjectRef, t string) error {
	return i.waitLive(ctx, r, t, func(live *unstructured.Unstructured) bool { return conditionTrue(live.Object, t) })
}

// waitLive waits until the live object r exists and ok holds of it; what is the state waited for, for the
// error.
func (i *Injector) waitLive(ctx context.Context, r scenarios.ObjectRef, what string, ok func(live *unstructured.Unstructured) bool) error {
	err := kube.Poll(ctx, 200*time.Millisecond, waitTimeout, func(ctx context.Context) (bool, error) {
		live, err := i.env.Clients.Get(ctx, stub(r))
		return err == nil && live != nil && ok(live), nil
	})
	if err != nil {
		return fmt.Errorf("%s %s was not %s within %s: %w", r.Kind, r.Name, what, waitTimeout, err)
	}
	return nil
}

// ownNamespace refuses a namespace the scenario did not create for what a fault puts there (a release, an
// operator, a Secret): reset removes such things only with the namespace.
func (i *Injector) ownNamespace(ns, what string) error {
	if !i.ledger.createdNamespaces()[ns] {
		return fmt.Errorf("%s in namespace %q, which the scenario did not create: reset could not remove it", what, ns)
	}
	return nil
}

// conditionTrue says whether the object's status has the condition t with status True.
func conditionTrue(obj map[string]any, t string) bool {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == t && m["status"] == "True" {
			return true
		}
	}
	return false
}

// waitReady waits until every applied workload's controller has observed it and has all its replicas Ready.
func (i *Injector) waitReady(ctx context.Context, objs []*unstructured.Unstructured) error {
	return i.waitWorkloads(ctx, objs, "did not have all its replicas Ready", func(_ context.Context, _, live *unstructured.Unstructured) bool {
		return workloadReady(live)
	})
}

// waitWorkloads waits until done holds of every applied workload (an object with a selector, not a Service),
// given as applied and as live; what says what did not happen, for the error.
func (i *Injector) waitWorkloads(ctx context.Context, objs []*unstructured.Unstructured, what string, done func(ctx context.Context, o, live *unstructured.Unstructured) bool) error {
	for _, o := range objs {
		if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "selector"); !found || o.GetKind() == "Service" {
			continue
		}
		err := kube.Poll(ctx, 300*time.Millisecond, waitTimeout, func(ctx context.Context) (bool, error) {
			live, err := i.env.Clients.Get(ctx, stub(refOf(o)))
			if err != nil || live == nil {
				return false, nil
			}
			return done(ctx, o, live), nil
		})
		if err != nil {
			return fmt.Errorf("%s %s %s within %s: %w", o.GetKind(), manifest.Name(o), what, waitTimeout, err)
		}
	}
	return nil
}

// workloadReady reads a workload's status: a DaemonSet by its scheduled and ready Pods, any other by its
// replicas (1 when unset, as the API defaults it).
func workloadReady(w *unstructured.Unstructured) bool {
	status := func(f string) int64 { v, _, _ := unstructured.NestedInt64(w.Object, "status", f); return v }
	if status("observedGeneration") < w.GetGeneration() {
		return false
	}
	if w.GetKind() == "DaemonSet" {
		want := status("desiredNumberScheduled")
		return want > 0 && status("numberReady") == want && status("updatedNumberScheduled") == want
	}
	want, found, _ := unstructured.NestedInt64(w.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	return status("readyReplicas") >= want
}

// waitForPods waits until every applied workload has a Pod, so a symptom about that Pod can be observed, and
// until its controller has observed the applied spec: a second apply right after would otherwise be merged
// with the first into one rollout, and a revision the scenario builds would be missing from its history.
func (i *Injector) waitForPods(ctx context.Context, objs []*unstructured.Unstructured) error {
	return i.waitWorkloads(ctx, objs, "had no Pod, or its controller had not observed the change,", func(ctx context.Context, o, live *unstructured.Unstructured) bool {
		sel, found, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "matchLabels")
		if !found {
			return true
		}
		pl, err := i.env.Clients.Kube.CoreV1().Pods(o.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sel).String()})
		if err != nil || len(pl.Items) == 0 {
			return false
		}
		observed, found, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
		return !found || observed >= live.GetGeneration()
	})
}

// waitBound waits until every applied claim is Bound: a Pod created before its claim is bound is refused for
// that alone, and the scheduler may not try it again for minutes.
func (i *Injector) waitBound(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if o.GetKind() != "PersistentVolumeClaim" {
			continue
		}
		claims := i.env.Clients.Kube.CoreV1().PersistentVolumeClaims(o.GetNamespace())
		err := kube.Poll(ctx, 300*time.Millisecond, waitTimeout, func(ctx context.Context) (bool, error) {
			pvc, err := claims.Get(ctx, o.GetName(), metav1.GetOptions{})
			return err == nil && pvc.Status.Phase == corev1.ClaimBound, nil
		})
		if err != nil {
			return fmt.Errorf("claim %s not Bound within %s: %w", manifest.Name(o), waitTimeout, err)
		}
	}
	return nil
}

func (i *Injector) patch(ctx context.Context, p *scenarios.PatchFault) error {
	if err := i.recordObject(ctx, p.Object); err != nil {
		return err
	}
	ri, err := i.env.Clients.Resource(gvk(p.Object), p.Object.Namespace)
	if err != nil {
		return err
	}
	pt := map[string]types.PatchType{"merge": types.MergePatchType, "strategic": types.StrategicMergePatchType, "json": types.JSONPatchType}[p.Type]
	if _, err := ri.Patch(ctx, p.Object.Name, pt, []byte(p.Patch), metav1.PatchOptions{FieldManager: kube.FieldManager}); err != nil {
		return fmt.Errorf("patch %s: %w", p.Object, err)
	}
	return nil
}

func (i *Injector) delete(ctx context.Context, r scenarios.ObjectRef) error {
	if err := i.recordObject(ctx, r); err != nil {
		return err
	}
	return i.env.Clients.Delete(ctx, stub(r))
}

func (i *Injector) scale(ctx context.Context, s *scenarios.ScaleFault) error {
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, s.Replicas)
	return i.patch(ctx, &scenarios.PatchFault{Object: s.Object, Type: "merge", Patch: patch})
}

func gvk(r scenarios.ObjectRef) schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
}

// revertObject deletes what did not exist and writes back what did, whatever happened to it since.
func (i *Injector) revertObject(ctx context.Context, p *ObjectPrior) error {
	r := scenarios.ObjectRef{APIVersion: p.APIVersion, Kind: p.Kind, Namespace: p.Namespace, Name: p.Name}
	if string(p.Prior) == "null" || len(p.Prior) == 0 {
		if p.Kind == "Namespace" && p.APIVersion == "v1" {
			return namespace.Delete(ctx, i.env.Clients, p.Name)
		}
		return i.env.Clients.Delete(ctx, stub(r))
	}
	prior := &unstructured.Unstructured{}
	if err := json.Unmarshal(p.Prior, &prior.Object); err != nil {
		return err
	}
	ri, err := i.env.Clients.Resource(gvk(r), r.Namespace)
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live, err := ri.Get(ctx, r.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = ri.Create(ctx, prior.DeepCopy(), metav1.CreateOptions{FieldManager: kube.FieldManager})
			return err
		}
		if err != nil {
			return err
		}
		next := prior.DeepCopy()
		next.SetResourceVersion(live.GetResourceVersion())
		_, err = ri.Update(ctx, next, metav1.UpdateOptions{FieldManager: kube.FieldManager})
		return err
	})
}
