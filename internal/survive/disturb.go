package survive

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/node"
)

// Env is the cluster the disturbances act on.
type Env struct {
	Clients *kube.Clients
	Nodes   func() ([]nodes.Node, error)
}

const (
	// podGrace is the grace period a replaced Pod gets: enough for a process that handles SIGTERM, short
	// enough that a container that ignores it (sleep) does not hold grading for its 30 s default.
	podGrace = int64(2)
	// gone bounds the wait for deleted Pods to disappear, so grading never sees the old Pods still Ready.
	gone = 2 * time.Minute
	// back bounds the wait for a restarted component to come back; one that does not is what grading shows.
	back = 2 * time.Minute
)

// replaced are the controllers that create a deleted Pod again; a Job's finished Pods and a bare Pod are
// left alone, as nothing would bring them back.
var replaced = []string{"ReplicaSet", "StatefulSet", "DaemonSet"}

// Apply disturbs the cluster and waits until the disturbance has played out (the old Pods gone, the
// component restarted); it says false when there was nothing to disturb (no Pod to replace, no container to
// restart). A component that does not come back is no error: grading again shows what it breaks.
func (d Disturbance) Apply(ctx context.Context, env Env) (bool, error) {
	switch d.Kind {
	case DeletePods:
		return deletePods(ctx, env, d.Pods)
	case ReapplySysctl:
		return true, reapplySysctl(ctx, env, d.Node, d.Keys)
	case RestartStaticPod:
		return restartStaticPod(ctx, env, d.Node, d.Component)
	case RestartContainerd:
		return true, restartContainerd(ctx, env, d.Node)
	case RestartKubelet:
		return true, restartKubelet(ctx, env, d.Node)
	}
	return false, fmt.Errorf("unknown disturbance %q", d.Kind)
}

func deletePods(ctx context.Context, env Env, sets []PodSet) (bool, error) {
	pods := env.Clients.Kube.CoreV1().Pods
	deleted := map[string][]types.UID{}
	for _, set := range sets {
		list, err := pods(set.Namespace).List(ctx, metav1.ListOptions{LabelSelector: set.Selector})
		if err != nil {
			return false, fmt.Errorf("list the Pods in namespace %s: %w", set.Namespace, err)
		}
		for _, p := range list.Items {
			owner := metav1.GetControllerOf(&p)
			if p.DeletionTimestamp != nil || owner == nil || !slices.Contains(replaced, owner.Kind) ||
				slices.Contains(deleted[p.Namespace], p.UID) {
				continue
			}
			err := pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
				GracePeriodSeconds: ptr(min(podGrace, grace(p))), Preconditions: &metav1.Preconditions{UID: &p.UID}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return false, fmt.Errorf("delete Pod %s/%s: %w", p.Namespace, p.Name, err)
			}
			deleted[p.Namespace] = append(deleted[p.Namespace], p.UID)
		}
	}
	if len(deleted) == 0 {
		return false, nil
	}
	err := kube.Poll(ctx, 500*time.Millisecond, gone, func(ctx context.Context) (bool, error) {
		for ns, uids := range deleted {
			list, err := pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			if slices.ContainsFunc(list.Items, func(p corev1.Pod) bool { return slices.Contains(uids, p.UID) }) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return true, fmt.Errorf("the deleted Pods were still there after %s: %w", gone, err)
	}
	return true, nil
}

func grace(p corev1.Pod) int64 {
	if g := p.Spec.TerminationGracePeriodSeconds; g != nil {
		return *g
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

func ptr[T any](v T) *T { return &v }

// reapplySysctl applies the node's boot-time configuration of keys as systemd-sysctl does at boot, the files
// in the order of their names and the last setting winning, and of those keys only: the node shares its
// kernel with the host and its other clusters, whose other settings lab leaves alone.
func reapplySysctl(ctx context.Context, env Env, name string, keys []string) error {
	n, err := node.Find(env.Nodes, name)
	if err != nil {
		return err
	}
	args := make([]string, 0, len(keys))
	for _, k := range keys {
		args = append(args, "--prefix="+k)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := node.Run(ctx, n, "/lib/systemd/systemd-sysctl", args...); err != nil {
		return fmt.Errorf("apply the boot-time sysctl settings: %w", err)
	}
	return nil
}

// restartKubelet restarts the kubelet and waits until it has posted its node Ready again.
func restartKubelet(ctx context.Context, env Env, name string) error {
	n, err := node.Find(env.Nodes, name)
	if err != nil {
		return err
	}
	// The API server keeps heartbeats to the second.
	restarted := time.Now().Truncate(time.Second)
	if _, err := node.Run(ctx, n, "systemctl", "restart", "kubelet"); err != nil {
		return fmt.Errorf("restart the kubelet: %w", err)
	}
	_ = kube.Poll(ctx, time.Second, back, func(ctx context.Context) (bool, error) {
		no, err := env.Clients.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range no.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue && !c.LastHeartbeatTime.Time.Before(restarted), nil
			}
		}
		return false, nil
	})
	return nil
}

// restartContainerd restarts containerd and waits until it answers the CRI again; the containers it runs
// keep running through their shims, as on a real node.
func restartContainerd(ctx context.Context, env Env, name string) error {
	n, err := node.Find(env.Nodes, name)
	if err != nil {
		return err
	}
	if _, err := node.Run(ctx, n, "systemctl", "restart", "containerd"); err != nil {
		return fmt.Errorf("restart containerd: %w", err)
	}
	_ = kube.Poll(ctx, time.Second, back, func(ctx context.Context) (bool, error) {
		_, err := node.Crictl(ctx, n, "info")
		return err == nil, nil
	})
	return nil
}

// restartStaticPod stops the component's running containers, which the kubelet starts again from its
// manifest, and waits for a new one to run (and for the API server to answer, when it was the one).
func restartStaticPod(ctx context.Context, env Env, name, component string) (bool, error) {
	n, err := node.Find(env.Nodes, name)
	if err != nil {
		return false, err
	}
	old, err := running(ctx, n, component)
	if err != nil {
		return false, err
	}
	if len(old) == 0 {
		return false, nil
	}
	if _, err := node.Crictl(ctx, n, append([]string{"stop"}, old...)...); err != nil {
		return false, fmt.Errorf("stop %s: %w", component, err)
	}
	_ = kube.Poll(ctx, time.Second, back, func(ctx context.Context) (bool, error) {
		ids, err := running(ctx, n, component)
		return err == nil && slices.ContainsFunc(ids, func(id string) bool { return !slices.Contains(old, id) }), nil
	})
	if component == "kube-apiserver" || component == "etcd" {
		_ = env.Clients.WaitReady(ctx, back)
	}
	return true, nil
}

// running lists the IDs of the component's running containers in kube-system on n.
func running(ctx context.Context, n nodes.Node, component string) ([]string, error) {
	containers, err := node.RunningContainers(ctx, n, "kube-system", component)
	var ids []string
	for _, c := range containers {
		ids = append(ids, c.ID)
	}
	return ids, err
}
