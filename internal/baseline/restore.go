package baseline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/namespace"
	"github.com/cka-lab/lab/internal/node"
)

// Restore brings API objects and node specs back to base: extra objects are deleted, missing or changed ones
// written back from the baseline. Files and services on nodes are the ledger's to restore (static Pod
// manifests the baseline lacks aside, see RemoveExtraManifests); what is left of them is reported by Diff.
func Restore(ctx context.Context, c *kube.Clients, base, live *Snapshot) error {
	var errs []error
	// Namespaces first: deleting one removes everything in it, which the per-object pass would do slowly.
	for _, k := range slices.Sorted(maps.Keys(live.Objects)) {
		o := live.Objects[k]
		if base.extra(k, o) && o.Kind == "Namespace" {
			errs = append(errs, namespace.Delete(ctx, c, o.Name))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(live.Objects)) {
		o := live.Objects[k]
		if !base.extra(k, o) || o.Kind == "Namespace" || o.Namespace != "" && !base.hasNamespace(o.Namespace) {
			continue
		}
		if o.Kind == "PersistentVolume" && provisionerWillDelete(ctx, c, o.Name) {
			continue
		}
		errs = append(errs, c.Delete(ctx, stub(o)))
	}
	for _, k := range slices.Sorted(maps.Keys(base.Objects)) {
		b := base.Objects[k]
		if l, ok := live.Objects[k]; (ok && l.Hash == b.Hash) || len(b.Content) == 0 {
			continue
		}
		errs = append(errs, writeBack(ctx, c, b))
	}
	for name, n := range base.Nodes {
		l := live.Nodes[name]
		if !equalMaps(n.Labels, l.Labels) || !slices.Equal(TaintStrings(n.Taints), TaintStrings(l.Taints)) || n.Unschedulable != l.Unschedulable {
			errs = append(errs, restoreNode(ctx, c, name, n))
		}
	}
	return errors.Join(errs...)
}

func (s *Snapshot) hasNamespace(ns string) bool {
	_, ok := s.Objects["Namespace "+ns]
	return ok
}

func stub(o Object) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(o.APIVersion, o.Kind))
	u.SetNamespace(o.Namespace)
	u.SetName(o.Name)
	return u
}

func writeBack(ctx context.Context, c *kube.Clients, b Object) error {
	want := &unstructured.Unstructured{}
	if err := json.Unmarshal(b.Content, &want.Object); err != nil {
		return err
	}
	ri, err := c.Resource(want.GroupVersionKind(), want.GetNamespace())
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live, err := ri.Get(ctx, want.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = ri.Create(ctx, want.DeepCopy(), metav1.CreateOptions{FieldManager: kube.FieldManager})
			return err
		}
		if err != nil {
			return err
		}
		next := want.DeepCopy()
		next.SetResourceVersion(live.GetResourceVersion())
		_, err = ri.Update(ctx, next, metav1.UpdateOptions{FieldManager: kube.FieldManager})
		if err != nil {
			return fmt.Errorf("restore %s %s: %w", b.Kind, strings.TrimPrefix(b.ref(), "/"), err)
		}
		return nil
	})
}

func restoreNode(ctx context.Context, c *kube.Clients, name string, want Node) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Labels, n.Spec.Taints, n.Spec.Unschedulable = want.Labels, want.Taints, want.Unschedulable
		_, err = c.Kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
}

// provisionerWillDelete reports a dynamically provisioned volume whose claim is gone: its provisioner deletes
// it together with its data, which deleting the object here would leave behind on the node.
func provisionerWillDelete(ctx context.Context, c *kube.Clients, name string) bool {
	pv, err := c.Kube.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	return pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete && pv.Status.Phase != corev1.VolumeAvailable
}

// manifestsDir is where the kubelet reads static Pods from on every kubeadm node.
const manifestsDir = "/etc/kubernetes/manifests/"

// RemoveExtraManifests deletes the static Pod manifests on ns that the baseline did not have: a static Pod a
// learner built, or a backup copy left in the directory, which the kubelet runs as well. No ledger knows of
// them; a manifest the baseline had is the ledger's to restore.
func RemoveExtraManifests(ctx context.Context, ns []nodes.Node, base, live *Snapshot) error {
	var errs []error
	for _, n := range ns {
		extra := extraManifests(n.String(), base, live)
		if len(extra) == 0 {
			continue
		}
		if _, err := node.Run(ctx, n, "rm", append([]string{"-f", "--"}, extra...)...); err != nil {
			errs = append(errs, fmt.Errorf("remove static Pod manifests %s on %s: %w", strings.Join(extra, ", "), n, err))
		}
	}
	return errors.Join(errs...)
}

// extraManifests are the paths of the static Pod manifests on the node named node that live has and base has not.
func extraManifests(node string, base, live *Snapshot) []string {
	var extra []string
	for _, k := range slices.Sorted(maps.Keys(live.Files)) {
		name, path, _ := strings.Cut(k, ":")
		if _, ok := base.Files[k]; !ok && name == node && strings.HasPrefix(path, manifestsDir) {
			extra = append(extra, path)
		}
	}
	return extra
}
