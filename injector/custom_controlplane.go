package injector

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/journey/evidence"
	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/node"
	"github.com/cka-lab/lab/scenarios"
)

// Control-plane faults: a static Pod manifest on a control-plane node edited the way a colleague would, which
// the kubelet there acts on by itself; and the tools an exam's control-plane host has installed.
func init() {
	Register("staticPodManifest", staticPodManifest)
	Register("installFromComponent", installFromComponent)
}

// manifestsDir is where kubeadm's kubelet reads static Pods from.
const manifestsDir = "/etc/kubernetes/manifests"

// controlPlaneComponents are the static Pods a scenario may break.
var controlPlaneComponents = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"}

// staticPodRestart bounds the wait for a static Pod to be replaced: the kubelet stops the old Pod within its
// grace period and an API server takes up to a minute to serve again on this class of machine.
const staticPodRestart = 3 * time.Minute

// kubeletNotices is how long a kubelet normally takes to replace a static Pod whose manifest changed.
const kubeletNotices = 45 * time.Second

// StaticPodPrior is a control-plane static Pod as it ran before its manifest was changed: UID is the kubelet's
// hash of the manifest, the same again once the manifest is restored.
type StaticPodPrior struct {
	Node      string `json:"node"`
	Component string `json:"component"`
	UID       string `json:"uid"`
	// Changed is when the manifest was changed: a kubelet started after it is one the learner restarted.
	Changed time.Time `json:"changed,omitzero"`
}

// staticPodManifest replaces text (args old, new) in a component's manifest (args component) on a
// control-plane node (args node) and waits until the kubelet has stopped the Pod that ran the old one, so the
// next fault or symptom meets the broken component. With args wait=running it also waits until the new Pod
// runs (a component that starts fine with a wrong setting). The Pod is recorded before the file: reverting
// (newest first) restores the manifest, then waits until the original Pod runs again.
func staticPodManifest(ctx context.Context, i *Injector, args map[string]string) error {
	component := args["component"]
	if !slices.Contains(controlPlaneComponents, component) {
		return fmt.Errorf("component must be one of %s, got %q", strings.Join(controlPlaneComponents, ", "), component)
	}
	n, err := i.node(args["node"])
	if err != nil {
		return err
	}
	pods, err := staticPods(ctx, n, component)
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		return fmt.Errorf("%s is not running on %s: the cluster is not at its baseline", component, n)
	}
	prior := &StaticPodPrior{Node: n.String(), Component: component, UID: pods[0].uid, Changed: time.Now()}
	if err := i.ledger.Record(Entry{StaticPod: prior}); err != nil {
		return err
	}
	edit := &scenarios.NodeFileFault{Node: prior.Node, Path: manifestsDir + "/" + component + ".yaml",
		Replace: &scenarios.Replacement{Old: args["old"], New: args["new"]}}
	if err := i.nodeFile(ctx, edit); err != nil {
		return err
	}
	if err := stopOtherThan(ctx, n, component, ""); err != nil {
		return err
	}
	err = kube.Poll(ctx, time.Second, staticPodRestart, func(ctx context.Context) (bool, error) {
		pods, err := staticPods(ctx, n, component)
		if err != nil {
			return false, nil
		}
		replaced := !slices.ContainsFunc(pods, func(p staticPod) bool { return p.uid == prior.UID })
		if args["wait"] == "running" {
			return replaced && slices.ContainsFunc(pods, func(p staticPod) bool { return p.running }), nil
		}
		return replaced, nil
	})
	if err != nil {
		return fmt.Errorf("the kubelet on %s did not replace %s after its manifest changed: %w", n, component, err)
	}
	return nil
}

// revertStaticPod waits until the Pod of the restored manifest runs again, and for the API server until it
// answers: everything reset does next goes through it.
func (i *Injector) revertStaticPod(ctx context.Context, p *StaticPodPrior) error {
	n, err := i.node(p.Node)
	if err != nil {
		return err
	}
	restored := func(timeout time.Duration) error { return staticPodRuns(ctx, n, p.Component, p.UID, timeout) }
	if err := stopOtherThan(ctx, n, p.Component, p.UID); err != nil {
		return err
	}
	// A kubelet restarted while the API server was down (a learner's attempt) never notices the restored
	// manifest; a kubelet that starts reads every manifest afresh. One known to have been restarted since the
	// manifest changed, with the Pod not back yet, is restarted at once rather than after kubeletNotices.
	if restored(time.Second) != nil && (restartedSince(ctx, n, p.Changed) || restored(kubeletNotices) != nil) {
		if _, err := node.Run(ctx, n, "systemctl", "restart", "kubelet"); err != nil {
			return fmt.Errorf("restart the kubelet on %s to pick up the restored %s: %w", p.Node, p.Component, err)
		}
		if err := restored(staticPodRestart); err != nil {
			return fmt.Errorf("%s on %s did not run its restored manifest: %w", p.Component, p.Node, err)
		}
	}
	if p.Component != "kube-apiserver" && p.Component != "etcd" {
		return nil
	}
	if err := i.env.Clients.WaitReady(ctx, staticPodRestart); err != nil {
		return fmt.Errorf("the API server did not become ready after %s was restored: %w", p.Component, err)
	}
	back := time.Now()
	if err := i.forgetBackOff(ctx); err != nil {
		return err
	}
	return i.hearNodes(ctx, back)
}

// staticPodRuns waits up to timeout until the Pod uid of component runs on n.
func staticPodRuns(ctx context.Context, n nodes.Node, component, uid string, timeout time.Duration) error {
	return kube.Poll(ctx, time.Second, timeout, func(ctx context.Context) (bool, error) {
		pods, err := staticPods(ctx, n, component)
		return err == nil && slices.ContainsFunc(pods, func(sp staticPod) bool { return sp.uid == uid && sp.running }), nil
	})
}

// restartedSince says whether the kubelet on n is known to have started after t.
func restartedSince(ctx context.Context, n nodes.Node, t time.Time) bool {
	if t.IsZero() {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	started, err := node.UnitStarted(ctx, n, "kubelet")
	return err == nil && started.After(t)
}

// stopOtherThan stops, within a second, the running containers of component's static Pods on n other than
// the Pod keep (a UID; "" stops them all). The kubelet would give an API server its 30 s grace period to
// close its watches after the manifest changed; the colleague who edited it does not care, and start and
// reset need not wait. Should the kubelet not have read the new manifest yet, it restarts the old container
// and replaces it once it has: the outcome is the same.
func stopOtherThan(ctx context.Context, n nodes.Node, component, keep string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	containers, err := node.RunningContainers(ctx, n, "kube-system", component)
	if err != nil {
		return err
	}
	for _, c := range containers {
		if keep != "" && c.Labels["io.kubernetes.pod.uid"] == keep {
			continue
		}
		// The kubelet may have removed it since: it is gone, as wanted.
		if _, err := node.Crictl(ctx, n, "stop", "--timeout", "1", c.ID); err != nil && !strings.Contains(err.Error(), "NotFound") {
			return fmt.Errorf("stop the replaced %s on %s: %w", component, n, err)
		}
	}
	return nil
}

// forgetBackOff restarts the kubelet on every node after the API server was away. On the control plane the
// controller manager and the scheduler exit once they cannot renew their leader leases, and the kubelet's
// crash-loop back-off, growing with every outage for ten minutes, kept them down for up to five minutes
// after the API server was back, into the next scenario. Elsewhere the node controller may mark a node whose
// lease renewal came late NotReady, and its kubelet took 70-90 s to report again. A restarted kubelet
// forgets the back-off, reports at once and keeps every running container.
func (i *Injector) forgetBackOff(ctx context.Context) error {
	ns, err := i.env.Nodes()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var g errgroup.Group
	for _, n := range ns {
		g.Go(func() error {
			if _, err := node.Run(ctx, n, "systemctl", "restart", "kubelet"); err != nil {
				return fmt.Errorf("restart the kubelet on %s: %w", n, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// nodesHeard bounds the wait for every kubelet to renew its lease after the API server came back: each
// renews within 10 s.
const nodesHeard = 15 * time.Second

// hearNodes waits until every kubelet, restarted by forgetBackOff, has renewed its lease since back: a
// restarted kubelet posts its node's status at once, so no node is left unheard for reset to wait out.
func (i *Injector) hearNodes(ctx context.Context, back time.Time) error {
	kc := i.env.Clients.Kube
	err := kube.Poll(ctx, time.Second, nodesHeard, func(ctx context.Context) (bool, error) {
		nl, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		renewed, err := evidence.NodeLeases(ctx, kc)
		if err != nil {
			return false, nil
		}
		for _, n := range nl.Items {
			if !renewed[n.Name].After(back) {
				return false, nil
			}
		}
		return true, nil
	})
	// A kubelet that does not renew its lease (its configuration broken by the learner) is the baseline's to
	// restore, not this.
	if err != nil && (ctx.Err() != nil || !wait.Interrupted(err)) {
		return err
	}
	return nil
}

// staticPod is one ready Pod sandbox of a component on a node, as the container runtime sees it: the API
// server may be down.
type staticPod struct {
	uid     string
	running bool
}

func staticPods(ctx context.Context, n nodes.Node, component string) ([]staticPod, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := node.Crictl(ctx, n, "pods", "--state", "ready", "--namespace", "kube-system",
		"--label", "component="+component, "-o", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			ID     string            `json:"id"`
			Labels map[string]string `json:"labels"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, fmt.Errorf("read crictl pods on %s: %w", n, err)
	}
	var pods []staticPod
	for _, it := range list.Items {
		running, err := node.Crictl(ctx, n, "ps", "--pod", it.ID, "--state", "running", "-q")
		if err != nil {
			return nil, err
		}
		pods = append(pods, staticPod{uid: it.Labels["io.kubernetes.pod.uid"], running: strings.TrimSpace(running) != ""})
	}
	return pods, nil
}

// installFromComponent copies a program (args path) out of the root filesystem of a running component (args
// process, the name of its process) onto the node (args node) at the same path, as a control-plane host of the
// exam has etcdctl installed. Recorded like any new file, so reset removes it.
func installFromComponent(ctx context.Context, i *Injector, args map[string]string) error {
	n, err := i.node(args["node"])
	if err != nil {
		return err
	}
	if err := i.recordFile(ctx, n, args["path"]); err != nil {
		return err
	}
	if _, err := node.Run(ctx, n, "sh", "-c", `pid=$(pgrep -xo "$1") && cp "/proc/$pid/root$2" "$2"`, "sh", args["process"], args["path"]); err != nil {
		return fmt.Errorf("copy %s out of %s: %w", args["path"], args["process"], err)
	}
	return nil
}
