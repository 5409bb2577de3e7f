package grader

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/cka-lab/lab/internal/node"
)

// What the API server cannot tell about a node a question names: whether its kubelet and container runtime
// run, since when, and when the static Pod manifests its checks read last changed. A kubelet the learner just
// restarted has not reported yet, and a manifest just edited has not been acted on yet, although the API
// server still shows the old, settled state; a kubelet or runtime that is stopped or keeps exiting will not
// bring its node back by itself.

// nodeFacts is one reading of a node from inside it.
type nodeFacts struct {
	kubelet, containerd unitFacts
	// manifests maps each manifest path read to its modification time (absent: no such file).
	manifests map[string]time.Time
}

// unitFacts is a systemd unit as `systemctl show` reports it.
type unitFacts struct {
	state, sub string    // ActiveState (active, inactive, failed, activating, ...) and SubState (running, auto-restart, ...)
	since      time.Time // ActiveEnterTimestamp: when it last started
	restarts   int       // NRestarts: restarts systemd made after the unit exited
}

// down says why a unit will not come back by itself, or "".
func (u unitFacts) down(name string, firstRestarts int) string {
	switch {
	case u.state == "inactive" || u.state == "failed":
		return fmt.Sprintf("%s is %s", name, u.state)
	case u.sub == "auto-restart" || u.restarts > firstRestarts:
		return fmt.Sprintf("%s keeps exiting (systemd restarted it %d times)", name, u.restarts)
	}
	return ""
}

// down says why the node's kubelet or runtime will not come back by itself, or ""; firstRestarts is the
// kubelet's restart count when the check began.
func (f *nodeFacts) down(firstRestarts int) string {
	if why := f.kubelet.down("the kubelet", firstRestarts); why != "" {
		return why
	}
	return f.containerd.down("containerd", 0)
}

// nodeProbe reads a node's facts; manifests are the static Pod manifest paths to stat.
type nodeProbe func(ctx context.Context, node string, manifests []string) (*nodeFacts, error)

const probeScript = `systemctl show kubelet containerd --timestamp=unix -p Id -p ActiveState -p SubState -p ActiveEnterTimestamp -p NRestarts
for f in "$@"; do [ -e "$f" ] && echo "Manifest=$(stat -c %Y "$f") $f"; done; true`

// probeNode execs in the node container, as `lab ssh` does.
func (e Env) probeNode(ctx context.Context, name string, manifests []string) (*nodeFacts, error) {
	ns, err := e.Nodes()
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		if n.String() != name {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		out, err := node.Run(ctx, n, "sh", append([]string{"-c", probeScript, "sh"}, manifests...)...)
		if err != nil {
			return nil, err
		}
		return parseNodeFacts(out)
	}
	return nil, fmt.Errorf("no node %s", name)
}

// parseNodeFacts reads the probe script's output: one blank-line separated block per unit, then one line per
// manifest that exists.
func parseNodeFacts(out string) (*nodeFacts, error) {
	f := &nodeFacts{manifests: map[string]time.Time{}}
	units := map[string]*unitFacts{"kubelet.service": &f.kubelet, "containerd.service": &f.containerd}
	found := 0
	for _, block := range strings.Split(strings.TrimSpace(out), "\n\n") {
		props := map[string]string{}
		for _, line := range strings.Split(block, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				if k == "Manifest" {
					if stamp, p, ok := strings.Cut(v, " "); ok {
						if sec, err := strconv.ParseInt(stamp, 10, 64); err == nil {
							f.manifests[p] = time.Unix(sec, 0)
						}
					}
					continue
				}
				props[k] = v
			}
		}
		u := units[props["Id"]]
		if u == nil {
			continue
		}
		found++
		u.state, u.sub = props["ActiveState"], props["SubState"]
		u.restarts, _ = strconv.Atoi(props["NRestarts"])
		if since, ok := node.ParseUnitTimestamp(props["ActiveEnterTimestamp"]); ok {
			u.since = since
		}
	}
	if found != len(units) {
		return nil, fmt.Errorf("systemctl show printed %d of the kubelet's and containerd's states: %q", found, snippet([]byte(out)))
	}
	return f, nil
}

// heartbeat is when the node's kubelet last posted its status.
func heartbeat(n corev1.Node) time.Time {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.LastHeartbeatTime.Time
		}
	}
	return time.Time{}
}

// nodeWaiting says what a node is still doing. Without facts (the node could not be read from inside) a node
// NotReady is given nodeGrace from the check's start; with them, a kubelet or runtime that is down makes it
// stuck at once, and a kubelet (re)started after its node's last status post is waited for until it reports.
// firstRestarts is the kubelet's restart count when the check first read it.
func nodeWaiting(n corev1.Node, f *nodeFacts, firstRestarts int, since, now time.Time) []Waiting {
	key, name := "node/"+n.Name, "node "+n.Name
	ready := nodeReady(n)
	if f != nil {
		if why := f.down(firstRestarts); why != "" {
			return nodeDown(key, name, why, ready, since, now)
		}
		// The kubelet posts its node's status right after it starts, whatever changed: until then the node's
		// conditions are the previous kubelet's. Heartbeats have whole seconds.
		if started := f.kubelet.since; !started.IsZero() && heartbeat(n).Before(started.Truncate(time.Second)) {
			if until := started.Add(nodeGrace); now.Before(until) {
				return []Waiting{{Key: key + "|restarted", What: name + ": kubelet not reporting yet", Until: until}}
			}
		}
		if ready {
			return nil
		}
		// The runtime came back: the kubelet sees it at its next runtime probe and reports it with its next
		// status.
		if until := f.containerd.since.Add(nodeGrace); now.Before(until) {
			return []Waiting{{Key: key + "|runtime", What: name + ": containerd restarted, kubelet not reporting Ready yet", Until: until}}
		}
	}
	if ready {
		return nil
	}
	if until := since.Add(nodeGrace); now.Before(until) {
		return []Waiting{{Key: key + "|notready", What: name + ": kubelet not reporting Ready yet", Until: until}}
	}
	return nil
}

// nodeDown says whether a probed node's kubelet or runtime will not come back by itself.
func (v *view) nodeDown(name string) bool {
	f := v.facts[name]
	return f != nil && f.down(v.firstRestarts[name]) != ""
}

// unheardWaiting waits for a node whose kubelet renews its lease but has not reposted its status since the node
// controller marked it Unknown (see evidence.Unheard): it will, and until then its Pods show NotReady, so a
// correct fix to the API server or etcd is not judged before it has.
func unheardWaiting(n corev1.Node, now time.Time) []Waiting {
	var marked time.Time
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			marked = c.LastTransitionTime.Time
		}
	}
	until := marked.Add(unheardWait)
	if !now.Before(until) {
		return nil
	}
	return []Waiting{{Key: "node/" + n.Name + "|unheard", Until: until,
		What: "node " + n.Name + ": kubelet alive (lease renewed) but its status not reposted since the API server came back"}}
}

// nodeDown is a node whose kubelet or runtime will not come back by itself: stuck NotReady, or, while still
// Ready, about to be marked NotReady (by the node controller once the kubelet's lease runs out, or by the
// kubelet once its runtime probe fails) within nodeGrace of the check's start.
func nodeDown(key, name, why string, ready bool, since, now time.Time) []Waiting {
	if !ready {
		return nil
	}
	until := since.Add(nodeGrace)
	if !now.Before(until) {
		return nil
	}
	return []Waiting{{Key: key + "|down", What: fmt.Sprintf("%s: %s, the node is not marked NotReady yet", name, why), Until: until}}
}

// mirrorName is the mirror Pod the kubelet makes for a kubeadm static Pod manifest on a node.
func mirrorName(manifest, nodeName string) string {
	return strings.TrimSuffix(path.Base(manifest), path.Ext(manifest)) + "-" + nodeName
}

// staticPodWaiting says whether the kubelet has yet to act on a manifest changed after the static Pod it
// runs was made from it. A changed spec gives the static Pod a new UID, so the kubelet replaces it and its
// mirror Pod carries a new config.seen time; a write that changed nothing the kubelet reads makes no new Pod,
// so the wait ends after manifestCheck. mirror is nil when the mirror Pod does not exist.
func staticPodWaiting(manifest string, mtime time.Time, mirror *corev1.Pod, nodeName string, now time.Time) []Waiting {
	name := "pod/" + mirrorName(manifest, nodeName)
	made := time.Time{}
	if mirror != nil {
		made = mirror.CreationTimestamp.Time
		if seen, err := time.Parse(time.RFC3339Nano, mirror.Annotations["kubernetes.io/config.seen"]); err == nil {
			made = seen
		}
	}
	if !mtime.After(made.Truncate(time.Second)) {
		return nil
	}
	until := mtime.Add(manifestCheck + probeSlack)
	if !now.Before(until) {
		return nil
	}
	what := name + ": the kubelet has not restarted it from its changed manifest yet"
	if mirror == nil {
		what = name + ": no mirror Pod yet for its changed manifest"
	}
	return []Waiting{{Key: "static/" + name + "|" + mtime.String(), What: what, Until: until}}
}
