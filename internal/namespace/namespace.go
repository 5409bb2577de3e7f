// Package namespace deletes lab's scenario namespaces fast and completely: it empties and finalizes them itself
// instead of waiting out the namespace controller's fixed delay, and waits for the volumes their claims had.
package namespace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/cka-lab/lab/internal/kube"
)

// Delete deletes a namespace and waits until it is gone, so the next scenario can create it again.
func Delete(ctx context.Context, c *kube.Clients, name string) error {
	if err := StartDeletion(ctx, c, name); err != nil {
		return err
	}
	return WaitGone(ctx, c, []string{name})
}

// StartDeletion deletes a namespace's Pods without a grace period, then the namespace: the Pods are
// lab's, and a shell sleeping as PID 1 would otherwise hold the namespace for 30 seconds.
func StartDeletion(ctx context.Context, c *kube.Clients, name string) error {
	zero := int64(0)
	if err := c.Kube.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Pods in %s: %w", name, err)
	}
	if err := c.Kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	return nil
}

// WaitGone waits until none of the namespaces exists, emptying and finalizing them itself first, and
// until the volumes their claims had provisioned are deleted too: a namespace finalized at once is gone seconds
// before its provisioner has deleted those, and a baseline recorded then would keep a volume about to vanish.
func WaitGone(ctx context.Context, c *kube.Clients, names []string) error {
	if len(names) == 0 {
		return nil
	}
	zero := int64(0)
	volumes, err := provisionedVolumes(ctx, c, names)
	if err != nil {
		return err
	}
	// Best effort: what lab cannot finish (discovery failing included) is left to the namespace controller,
	// which the poll below waits for. One discovery serves every namespace of a revert.
	if kinds, err := namespacedKinds(ctx, c); err == nil {
		var g errgroup.Group
		for _, ns := range names {
			g.Go(func() error { _ = finishNamespaceDeletion(ctx, c, kinds, ns); return nil })
		}
		_ = g.Wait()
	}
	left := slices.Clone(names)
	err = kube.Poll(ctx, 250*time.Millisecond, 2*time.Minute, func(ctx context.Context) (bool, error) {
		left = slices.DeleteFunc(left, func(ns string) bool {
			_, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true
			}
			// Pods created after the first sweep (a controller's last replica) must not hold it up either.
			_ = c.Kube.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
			return false
		})
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("namespace(s) %v still terminating: %w", left, err)
	}
	err = kube.Poll(ctx, 250*time.Millisecond, 2*time.Minute, func(ctx context.Context) (bool, error) {
		volumes = slices.DeleteFunc(volumes, func(pv string) bool {
			_, err := c.Kube.CoreV1().PersistentVolumes().Get(ctx, pv, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
		return len(volumes) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("PersistentVolume(s) %v of deleted namespace(s) %v not deleted by their provisioner: %w", volumes, names, err)
	}
	return nil
}

// provisionedVolumes names the PersistentVolumes bound to claims in the namespaces that their provisioner deletes
// with the claim (reclaim policy Delete).
func provisionedVolumes(ctx context.Context, c *kube.Clients, namespaces []string) ([]string, error) {
	pvs, err := c.Kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list PersistentVolumes: %w", err)
	}
	var out []string
	for _, pv := range pvs.Items {
		if ref := pv.Spec.ClaimRef; ref != nil && slices.Contains(namespaces, ref.Namespace) &&
			pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete {
			out = append(out, pv.Name)
		}
	}
	return out, nil
}

// emptyWait bounds how long finishNamespaceDeletion waits for objects held by finalizers of their own (a claim's
// pvc-protection, lifted once its Pods are gone) before it leaves the namespace to the controller.
const emptyWait = 10 * time.Second

// finishNamespaceDeletion does at once what the namespace controller starts only after a fixed 5 s delay (there
// for HA API servers; a kind cluster has one), which made it most of a reset: it deletes every namespaced
// object of the given kinds (namespacedKinds) in the terminating namespace and, once every list comes back
// empty, finalizes the namespace, so the API server removes it. It finalizes nothing it could not see emptied
// (a list or delete that fails, an object that stays): finalizing then would orphan those objects in etcd, to
// reappear in a namespace of the same name.
func finishNamespaceDeletion(ctx context.Context, c *kube.Clients, kinds []schema.GroupVersionResource, name string) error {
	ns, err := c.Kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil || ns.DeletionTimestamp == nil {
		return err
	}
	zero := int64(0)
	background := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero, PropagationPolicy: &background}
	var g errgroup.Group
	g.SetLimit(8)
	for _, gvr := range kinds {
		g.Go(func() error {
			if err := c.Dynamic.Resource(gvr).Namespace(name).DeleteCollection(ctx, del, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete %s in %s: %w", gvr.Resource, name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var left string
	err = kube.Poll(ctx, 250*time.Millisecond, emptyWait, func(ctx context.Context) (bool, error) {
		left = ""
		for _, gvr := range kinds {
			l, err := c.Dynamic.Resource(gvr).Namespace(name).List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
			if err == nil && len(l.Items) > 0 {
				left = gvr.Resource + "/" + l.Items[0].GetName()
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("empty namespace %s (%s left): %w", name, left, err)
	}
	ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
	if _, err := c.Kube.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("finalize namespace %s: %w", name, err)
	}
	return nil
}

// namespacedKinds discovers the namespaced resources a namespace must be emptied of (deletableKinds). An
// aggregated API that does not answer (a learner's APIService for a Service that is not there, a broken
// metrics-server) keeps its objects in its own server, not in the cluster's etcd, so finalizing without it
// orphans nothing: the kinds that did answer are enough. Any other failure is an error.
func namespacedKinds(ctx context.Context, c *kube.Clients) ([]schema.GroupVersionResource, error) {
	lists, err := c.Kube.Discovery().ServerPreferredNamespacedResources()
	if err != nil {
		var failed *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &failed) || !aggregated(ctx, c, slices.Collect(maps.Keys(failed.Groups))) {
			return nil, fmt.Errorf("discover namespaced resources: %w", err)
		}
	}
	return deletableKinds(lists)
}

var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// aggregated says whether every group version is served by an APIService that names a Service: another
// server's API, not one the API server stores.
func aggregated(ctx context.Context, c *kube.Clients, gvs []schema.GroupVersion) bool {
	for _, gv := range gvs {
		svc, err := c.Dynamic.Resource(apiServices).Get(ctx, gv.Version+"."+gv.Group, metav1.GetOptions{})
		if err != nil {
			return false
		}
		if _, ok, _ := unstructured.NestedMap(svc.Object, "spec", "service"); !ok {
			return false
		}
	}
	return true
}

// deletableKinds are the namespaced resources to empty a namespace of: those the namespace controller deletes too
// (list and delete; a read-only view such as metrics.k8s.io holds nothing to delete). Each must also support
// deletecollection, else nothing may be finalized (an error).
func deletableKinds(lists []*metav1.APIResourceList) ([]schema.GroupVersionResource, error) {
	var out []schema.GroupVersionResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range l.APIResources {
			if !r.Namespaced || strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			if !slices.Contains(r.Verbs, "deletecollection") {
				return nil, fmt.Errorf("%s %s can be listed but not deleted by collection", gv, r.Name)
			}
			out = append(out, gv.WithResource(r.Name))
		}
	}
	return out, nil
}
