package injector

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/scenarios"
)

// Custom faults of the node-side, network and service scenarios: changes that only bite once something
// restarts, and the network add-on found by what it does rather than by its name.
func init() {
	Register("editAndRestart", editAndRestart)
	Register("breakConfigMap", breakConfigMap)
	Register("excludeFromCNIDaemonSet", excludeFromCNIDaemonSet)
}

// editAndRestart replaces text in a file on a node (args node, path, old, new) and restarts the unit that
// reads it (args unit), as a colleague editing a config and restarting the service would. The unit is
// recorded before the file, so a revert (newest first) puts the file back before it restarts the unit.
func editAndRestart(ctx context.Context, i *Injector, args map[string]string) error {
	node, unit := args["node"], args["unit"]
	n, err := i.node(node)
	if err != nil {
		return err
	}
	out, _ := NodeRun(ctx, n, "systemctl", "is-active", unit)
	if err := i.ledger.Record(Entry{Unit: &UnitPrior{Node: node, Unit: unit, Active: strings.TrimSpace(out) == "active", Restart: true}}); err != nil {
		return err
	}
	edit := &scenarios.NodeFileFault{Node: node, Path: args["path"], Replace: &scenarios.Replacement{Old: args["old"], New: args["new"]}}
	if err := i.nodeFile(ctx, edit); err != nil {
		return err
	}
	if _, err := NodeRun(ctx, n, "systemctl", "restart", unit); err != nil {
		return fmt.Errorf("restart %s after editing %s: %w", unit, args["path"], err)
	}
	return nil
}

// restartedAt is the annotation `kubectl rollout restart` sets on a Pod template.
const restartedAt = "kubectl.kubernetes.io/restartedAt"

// breakConfigMap replaces text (args old, new) in one key of a ConfigMap (args namespace, configmap, key) that
// a workload (args workload: deployment/NAME or daemonset/NAME, same namespace) reads only at start, then
// restarts every Pod of the workload so all of them read the broken config. The workload is recorded before
// the ConfigMap and its template is restarted: reverting (newest first) restores the ConfigMap, then rolls the
// workload back to its recorded template, so fresh Pods start with the good config instead of waiting out a
// crash loop's back-off.
func breakConfigMap(ctx context.Context, i *Injector, args map[string]string) error {
	ns := args["namespace"]
	kind, name, ok := strings.Cut(args["workload"], "/")
	kinds := map[string]string{"deployment": "Deployment", "daemonset": "DaemonSet"}
	if !ok || kinds[kind] == "" {
		return fmt.Errorf("workload must be deployment/NAME or daemonset/NAME, got %q", args["workload"])
	}
	workload := scenarios.ObjectRef{APIVersion: "apps/v1", Kind: kinds[kind], Namespace: ns, Name: name}
	cmRef := scenarios.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: args["configmap"]}
	for _, r := range []scenarios.ObjectRef{workload, cmRef} {
		if err := i.recordObject(ctx, r); err != nil {
			return err
		}
	}
	cms := i.env.Clients.Kube.CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(ctx, cmRef.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read %s: %w", cmRef, err)
	}
	data, key := cm.Data[args["key"]], args["key"]
	if !strings.Contains(data, args["old"]) {
		return fmt.Errorf("key %s of %s does not contain %q", key, cmRef, args["old"])
	}
	cm.Data[key] = strings.Replace(data, args["old"], args["new"], 1)
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: kube.FieldManager}); err != nil {
		return fmt.Errorf("update %s: %w", cmRef, err)
	}
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, restartedAt, time.Now().UTC().Format(time.RFC3339))
	var selector *metav1.LabelSelector
	apps := i.env.Clients.Kube.AppsV1()
	opts := metav1.PatchOptions{FieldManager: kube.FieldManager}
	if kind == "deployment" {
		var d *appsv1.Deployment
		if d, err = apps.Deployments(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), opts); err == nil {
			selector = d.Spec.Selector
		}
	} else {
		var ds *appsv1.DaemonSet
		if ds, err = apps.DaemonSets(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), opts); err == nil {
			selector = ds.Spec.Selector
		}
	}
	if err != nil {
		return fmt.Errorf("restart %s: %w", workload, err)
	}
	// A rolling update keeps old Pods serving while new ones crash; deleting them all is what makes the
	// broken config bite everywhere. Pods need no record: their controller recreates them.
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return fmt.Errorf("selector of %s: %w", workload, err)
	}
	if err := i.env.Clients.Kube.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel.String()}); err != nil {
		return fmt.Errorf("delete Pods of %s: %w", workload, err)
	}
	return nil
}

// cniConfDir is where every CNI add-on's DaemonSet installs its config on the node.
const cniConfDir = "/etc/cni/net.d"

// CNIDaemonSet finds the network add-on's DaemonSet in kube-system: the one whose Pods mount the node's CNI
// config directory, whatever the add-on is called (kindnet, kube-router, ...).
func CNIDaemonSet(ctx context.Context, c *kube.Clients) (*appsv1.DaemonSet, error) {
	dsl, err := c.Kube.AppsV1().DaemonSets("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list DaemonSets in kube-system: %w", err)
	}
	for i := range dsl.Items {
		for _, v := range dsl.Items[i].Spec.Template.Spec.Volumes {
			if v.HostPath != nil && strings.TrimSuffix(v.HostPath.Path, "/") == cniConfDir {
				return &dsl.Items[i], nil
			}
		}
	}
	return nil, fmt.Errorf("no DaemonSet in kube-system mounts %s: which network add-on does this cluster run?", cniConfDir)
}

// excludeFromCNIDaemonSet gives the network add-on's DaemonSet a node affinity that keeps it off one node
// (args node), as a colleague debugging that node might have, and waits until its Pod there is gone.
func excludeFromCNIDaemonSet(ctx context.Context, i *Injector, args map[string]string) error {
	node := args["node"]
	ds, err := CNIDaemonSet(ctx, i.env.Clients)
	if err != nil {
		return err
	}
	ref := scenarios.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: ds.Namespace, Name: ds.Name}
	if err := i.recordObject(ctx, ref); err != nil {
		return err
	}
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":`+
		`{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"NotIn","values":[%q]}]}]}}}}}}}`, node)
	if _, err := i.env.Clients.Kube.AppsV1().DaemonSets(ds.Namespace).Patch(ctx, ds.Name, types.MergePatchType, []byte(patch),
		metav1.PatchOptions{FieldManager: kube.FieldManager}); err != nil {
		return fmt.Errorf("patch %s: %w", ref, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return fmt.Errorf("selector of %s: %w", ref, err)
	}
	err = kube.Poll(ctx, 500*time.Millisecond, waitTimeout, func(ctx context.Context) (bool, error) {
		pl, err := i.env.Clients.Kube.CoreV1().Pods(ds.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		return err == nil && !hasPodOn(pl.Items, node), nil
	})
	if err != nil {
		return fmt.Errorf("the Pod of %s on %s did not go away: %w", ref, node, err)
	}
	return nil
}

func hasPodOn(pods []corev1.Pod, node string) bool {
	for _, p := range pods {
		if p.Spec.NodeName == node {
			return true
		}
	}
	return false
}
