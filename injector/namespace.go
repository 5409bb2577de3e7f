package injector

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/kube"
)

// DeleteNamespace deletes a namespace and waits until it is gone, so the next scenario can create it again.
func DeleteNamespace(ctx context.Context, c *kube.Clients, name string) error {
	if err := startNamespaceDeletion(ctx, c, name); err != nil {
		return err
	}
	return waitNamespacesGone(ctx, c, []string{name})
}

// startNamespaceDeletion deletes a namespace's Pods without a grace period, then the namespace: the Pods are
// lab's, and a shell sleeping as PID 1 would otherwise hold the namespace for 30 seconds.
func startNamespaceDeletion(ctx context.Context, c *kube.Clients, name string) error {
	zero := int64(0)
	if err := c.Kube.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Pods in %s: %w", name, err)
	}
	if err := c.Kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	return nil
}

// waitNamespacesGone waits until none of the namespaces exists.
func waitNamespacesGone(ctx context.Context, c *kube.Clients, names []string) error {
	zero := int64(0)
	left := slices.Clone(names)
	err := kube.Poll(ctx, 250*time.Millisecond, 2*time.Minute, func(ctx context.Context) (bool, error) {
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
	return nil
}
