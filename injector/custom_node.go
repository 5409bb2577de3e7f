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
	"github.com/cka-lab/lab/internal/node"
	"github.com/cka-lab/lab/scenarios"
)

// Custom faults of the node-side, network and service scenarios: changes that only bite once something
// restarts, and the network add-on found by what it does rather than by its name.
func init() {
	Register("editAndRestart", editAndRestart)
	Register("breakConfigMap", breakConfigMap)
	Register("excludeFromCNIDaemonSet", excludeFromCNIDaemonSet)
	Register("sysctl", setSysctl)
	Register("leaveCluster", leaveCluster)
}

// kindJoinConfig is where kind keeps the kubeadm configuration it joined a node with.
const kindJoinConfig = "/kind/kubeadm.conf"

// leaveCluster resets a worker (args node) with `kubeadm reset`, as an admin decommissioning it would: its
// kubelet stops and loses its credentials and configuration, its containers are removed. The Node object
// stays (NotReady), so the node keeps its Pod CIDR when it joins again. Every bootstrap token is deleted
// (recorded, so reset restores them), so a join needs a fresh one (args controlPlane is where kubeadm creates
// one). Revert joins the node again the way kind did, unless the learner already has.
func leaveCluster(ctx context.Context, i *Injector, args map[string]string) error {
	n, err := i.node(args["node"])
	if err != nil {
		return err
	}
	if err := i.ledger.Record(Entry{Joined: &JoinedPrior{Node: args["node"], ControlPlane: args["controlPlane"]}}); err != nil {
		return err
	}
	// A learner's join writes the kubelet's configuration and flags its own way (kubeadm's default socket path,
	// none of kind's flags): revert puts kind's back and restarts the kubelet on them, before it checks the join.
	if err := i.ledger.Record(Entry{Unit: &UnitPrior{Node: args["node"], Unit: "kubelet", Active: true, Restart: true}}); err != nil {
		return err
	}
	for _, f := range []string{"/var/lib/kubelet/config.yaml", "/var/lib/kubelet/kubeadm-flags.env"} {
		if err := i.recordFile(ctx, n, f); err != nil {
			return err
		}
	}
	if _, err := node.Run(ctx, n, "kubeadm", "reset", "--force"); err != nil {
		return fmt.Errorf("kubeadm reset: %w", err)
	}
	tokens, err := i.env.Clients.Kube.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{FieldSelector: "type=" + string(corev1.SecretTypeBootstrapToken)})
	if err != nil {
		return fmt.Errorf("list bootstrap tokens: %w", err)
	}
	for _, t := range tokens.Items {
		if err := i.delete(ctx, scenarios.ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: metav1.NamespaceSystem, Name: t.Name}); err != nil {
			return fmt.Errorf("delete bootstrap token %s: %w", t.Name, err)
		}
	}
	return nil
}

// rejoin joins a reset node again with kind's own join configuration, after creating its token anew (the
// fault deleted it), unless the node's kubelet already runs with credentials (the learner joined it).
func (i *Injector) rejoin(ctx context.Context, p *JoinedPrior) error {
	n, err := i.node(p.Node)
	if err != nil {
		return err
	}
	if _, err := node.Run(ctx, n, "sh", "-c", "test -s /etc/kubernetes/kubelet.conf && systemctl is-active -q kubelet"); err == nil {
		return nil
	}
	token, err := node.Run(ctx, n, "sh", "-c", `sed -n 's/^ *token: *//p' `+kindJoinConfig+` | head -n1 | tr -d '"'`)
	if err != nil || strings.TrimSpace(token) == "" {
		return fmt.Errorf("read the join token from %s on %s: %v", kindJoinConfig, p.Node, err)
	}
	cp, err := i.node(p.ControlPlane)
	if err != nil {
		return err
	}
	if out, err := node.Run(ctx, cp, "kubeadm", "token", "create", strings.TrimSpace(token), "--ttl", "1h"); err != nil && !strings.Contains(out, "already exists") {
		return fmt.Errorf("create the join token again: %w", err)
	}
	// A learner's half-finished join leaves files the join would refuse to overwrite.
	if _, err := node.Run(ctx, n, "kubeadm", "reset", "--force"); err != nil {
		return fmt.Errorf("kubeadm reset before joining again: %w", err)
	}
	if _, err := node.Run(ctx, n, "kubeadm", "join", "--config", kindJoinConfig, "--skip-phases=preflight"); err != nil {
		return fmt.Errorf("join %s again: %w", p.Node, err)
	}
	return nil
}

// setSysctl sets a kernel parameter (args key, value) on a node (args node) at run time, as `sysctl -w` does.
// Only parameters of the node container's own network namespace (net.*) are allowed: anything else is the
// host's kernel, which lab never changes.
func setSysctl(ctx context.Context, i *Injector, args map[string]string) error {
	nodeName, key, value := args["node"], args["key"], args["value"]
	if !strings.HasPrefix(key, "net.") || strings.HasPrefix(key, "net.core.") {
		return fmt.Errorf("sysctl %s is not one of a node's network namespace (net.*, not net.core.*)", key)
	}
	n, err := i.node(nodeName)
	if err != nil {
		return err
	}
	prior, err := node.Run(ctx, n, "sysctl", "-n", key)
	if err != nil {
		return fmt.Errorf("read sysctl %s: %w", key, err)
	}
	if err := i.ledger.Record(Entry{Sysctl: &SysctlPrior{Node: nodeName, Key: key, Value: strings.TrimSpace(prior)}}); err != nil {
		return err
	}
	if _, err := node.Run(ctx, n, "sysctl", "-qw", key+"="+value); err != nil {
		return fmt.Errorf("set sysctl %s: %w", key, err)
	}
	return nil
}

func (i *Injector) revertSysctl(ctx context.Context, p *SysctlPrior) error {
	n, err := i.node(p.Node)
	if err != nil {
		return err
	}
	if _, err := node.Run(ctx, n, "sysctl", "-qw", p.Key+"="+p.Value); err != nil {
		return fmt.Errorf("restore sysctl %s on %s: %w", p.Key, p.Node, err)
	}
	return nil
}

// editAndRestart replaces text in a file on a node (args node, path, old, new) and restarts the unit that
// reads it (args unit), as a colleague editing a config and restarting the service would. The unit is
// recorded before the file, so a revert (newest first) puts the file back before it restarts the unit.
func editAndRestart(ctx context.Context, i *Injector, args map[string]string) error {
	nodeName, unit := args["node"], args["unit"]
	n, err := i.node(nodeName)
	if err != nil {
		return err
	}
	state, err := node.UnitState(ctx, n, unit)
	if err != nil {
		return err
	}
	if err := i.ledger.Record(Entry{Unit: &UnitPrior{Node: nodeName, Unit: unit, Active: state == "active", Restart: true}}); err != nil {
		return err
	}
	edit := &scenarios.NodeFileFault{Node: nodeName, Path: args["path"], Replace: &scenarios.Replacement{Old: args["old"], New: args["new"]}}
	if err := i.nodeFile(ctx, edit); err != nil {
		return err
	}
	if _, err := node.Run(ctx, n, "systemctl", "restart", unit); err != nil {
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

// excludeFromCNIDaemonSet gives the network add-on's DaemonSet a node affinity that keeps it off one node
// (args node), as a colleague debugging that node might have, and waits until its Pod there is gone.
func excludeFromCNIDaemonSet(ctx context.Context, i *Injector, args map[string]string) error {
	nodeName := args["node"]
	ds, err := node.CNIDaemonSet(ctx, i.env.Clients.Kube)
	if err != nil {
		return err
	}
	ref := scenarios.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: ds.Namespace, Name: ds.Name}
	if err := i.recordObject(ctx, ref); err != nil {
		return err
	}
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":`+
		`{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"NotIn","values":[%q]}]}]}}}}}}}`, nodeName)
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
		return err == nil && !hasPodOn(pl.Items, nodeName), nil
	})
	if err != nil {
		return fmt.Errorf("the Pod of %s on %s did not go away: %w", ref, nodeName, err)
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
