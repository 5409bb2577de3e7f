package injector

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/kube"
)

// DeleteNamespace deletes a namespace and waits until it is gone, so the next scenario can create it again.
// Its Pods are deleted without a grace period first: they are lab's, and a shell sleeping as PID 1 would
// otherwise hold the namespace for 30 seconds.
func DeleteNamespace(ctx context.Context, c *kube.Clients, name string) error {
	zero := int64(0)
	pods := c.Kube.CoreV1().Pods(name)
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Pods in %s: %w", name, err)
	}
	if err := c.Kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	err := kube.Poll(ctx, 250*time.Millisecond, 2*time.Minute, func(ctx context.Context) (bool, error) {
		_, err := c.Kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		// Pods created after the first sweep (a controller's last replica) also must not hold it up.
		_ = pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s is still terminating: %w", name, err)
	}
	return nil
}
