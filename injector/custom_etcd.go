package injector

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/yaml"

	"github.com/cka-lab/lab/internal/node"
	"github.com/cka-lab/lab/internal/tools"
)

func init() {
	Register("installEtcdutl", installEtcdutl)
	Register("etcdSnapshot", etcdSnapshot)
}

// etcdDataDir is where kubeadm keeps etcd's data on a control-plane node.
const etcdDataDir = "/var/lib/etcd"

// etcdManifest is the static Pod manifest of kubeadm's etcd.
const etcdManifest = manifestsDir + "/etcd.yaml"

// EtcdDataPrior is etcd's data on a control-plane node before a scenario offered a snapshot to restore: UID is
// the etcd static Pod then, Dirs the entries of /var/lib named etcd* (a restore the learner made beside them is
// theirs to remove).
type EtcdDataPrior struct {
	Node string   `json:"node"`
	UID  string   `json:"uid"`
	Dirs []string `json:"dirs"`
}

// installEtcdutl copies this machine's etcdutl (tools.Etcdutl) onto the node (args node), as an exam host has
// it installed; the etcd image kind runs has etcdctl but not etcdutl, which restores a snapshot.
func installEtcdutl(ctx context.Context, i *Injector, args map[string]string) error {
	return i.installProgram(ctx, args["node"], program{
		find: tools.Etcdutl, path: "/usr/local/bin/etcdutl", check: []string{"version"},
		fix: fmt.Sprintf("set %s to one, or build it with `make etcdutl`", tools.EtcdutlEnv),
	})
}

// etcdSnapshot saves a snapshot of the etcd on a control-plane node (args node) to args path, as a backup job
// did, with etcdctl from etcd's own image. A scenario that offers a snapshot invites a restore, which changes
// etcd's manifest and data: both are recorded, so reset keeps the cluster's data as the restore left it (its
// revisions only move forward, which every watch in the cluster relies on) while the manifest and data
// directory go back to kubeadm's.
func etcdSnapshot(ctx context.Context, i *Injector, args map[string]string) error {
	n, err := i.node(args["node"])
	if err != nil {
		return err
	}
	pods, err := staticPods(ctx, n, "etcd")
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		return fmt.Errorf("etcd is not running on %s: the cluster is not at its baseline", n)
	}
	dirs, err := etcdDirs(ctx, n)
	if err != nil {
		return err
	}
	prior := &StaticPodPrior{Node: n.String(), Component: "etcd", UID: pods[0].uid, Changed: time.Now()}
	if err := i.ledger.Record(Entry{StaticPod: prior}); err != nil {
		return err
	}
	if err := i.recordFile(ctx, n, etcdManifest); err != nil {
		return err
	}
	if err := i.ledger.Record(Entry{EtcdData: &EtcdDataPrior{Node: n.String(), UID: prior.UID, Dirs: dirs}}); err != nil {
		return err
	}
	if err := i.recordFile(ctx, n, args["path"]); err != nil {
		return err
	}
	save := `pid=$(pgrep -xo etcd) && mkdir -p "$(dirname "$1")" && "/proc/$pid/root/usr/local/bin/etcdctl" \
		--endpoints=https://127.0.0.1:2379 --cacert=/etc/kubernetes/pki/etcd/ca.crt \
		--cert=/etc/kubernetes/pki/etcd/server.crt --key=/etc/kubernetes/pki/etcd/server.key snapshot save "$1"`
	if _, err := node.Run(ctx, n, "sh", "-c", save, "sh", args["path"]); err != nil {
		return fmt.Errorf("save an etcd snapshot to %s on %s: %w", args["path"], n, err)
	}
	return nil
}

// etcdDirs lists the entries of /var/lib named etcd* on n.
func etcdDirs(ctx context.Context, n nodes.Node) ([]string, error) {
	out, err := node.Run(ctx, n, "sh", "-c", `cd /var/lib && for d in etcd*; do [ -e "$d" ] && echo "/var/lib/$d"; done; true`)
	if err != nil {
		return nil, fmt.Errorf("list /var/lib on %s: %w", n, err)
	}
	return strings.Fields(out), nil
}

// revertEtcdData moves the data etcd runs from into kubeadm's data directory when a restore put it elsewhere,
// and removes the restores left beside kubeadm's (a learner's restore into /var/lib/etcd-restore, say, would
// otherwise refuse the next attempt's restore into the same place). Data that holds no cluster (a restore of
// the wrong file, an empty directory) is not moved: kubeadm's data directory keeps what it had.
func (i *Injector) revertEtcdData(ctx context.Context, p *EtcdDataPrior) error {
	n, err := i.node(p.Node)
	if err != nil {
		return err
	}
	manifest, _, err := node.ReadFile(ctx, n, etcdManifest)
	if err != nil {
		return err
	}
	dir := etcdHostDataDir([]byte(manifest))
	if dir != "" && dir != etcdDataDir && !strings.HasPrefix(etcdDataDir+"/", dir+"/") {
		if _, err := node.Run(ctx, n, "grep", "-qa", "/registry/namespaces/kube-system", dir+"/member/snap/db"); err == nil {
			if err := i.moveEtcdData(ctx, n, p, dir); err != nil {
				return err
			}
		}
	}
	now, err := etcdDirs(ctx, n)
	if err != nil {
		return err
	}
	for _, d := range now {
		if d != etcdDataDir && !slices.Contains(p.Dirs, d) {
			if _, err := node.Run(ctx, n, "rm", "-rf", "--", d); err != nil {
				return err
			}
		}
	}
	return nil
}

// moveEtcdData makes dir's data kubeadm's with the kubelet, etcd and the API server stopped, puts kubeadm's
// manifest back and starts the kubelet, which starts both again as it does at boot. An API server left running
// without etcd accepts every call and answers it only at its timeout; the kubelet, restarted or not, makes such
// calls before it starts etcd again: minutes in all, against seconds when the calls are refused.
func (i *Injector) moveEtcdData(ctx context.Context, n nodes.Node, p *EtcdDataPrior, dir string) error {
	if _, err := node.Run(ctx, n, "systemctl", "stop", "kubelet"); err != nil {
		return fmt.Errorf("stop the kubelet on %s: %w", n, err)
	}
	for _, c := range []string{"etcd", "kube-apiserver"} {
		if err := stopOtherThan(ctx, n, c, ""); err != nil {
			return err
		}
	}
	move := `rm -rf "$1/member" && mv "$2/member" "$1/member" && { rmdir "$2" 2>/dev/null; true; }`
	if _, err := node.Run(ctx, n, "sh", "-c", move, "sh", etcdDataDir, dir); err != nil {
		return fmt.Errorf("move etcd's data from %s to %s on %s: %w", dir, etcdDataDir, n, err)
	}
	if m := i.ledger.find(Entry{File: &FilePrior{Node: p.Node, Path: etcdManifest}}); m != nil {
		if err := i.revertFile(ctx, m.File); err != nil {
			return err
		}
	}
	if _, err := node.Run(ctx, n, "systemctl", "start", "kubelet"); err != nil {
		return fmt.Errorf("start the kubelet on %s: %w", n, err)
	}
	if err := staticPodRuns(ctx, n, "etcd", p.UID, staticPodRestart); err != nil {
		return fmt.Errorf("etcd on %s did not start on its restored data: %w", n, err)
	}
	return nil
}

// etcdHostDataDir is the directory on the node that etcd's manifest has it keep its data in: its --data-dir
// within the host path mounted there. "" when the manifest does not say.
func etcdHostDataDir(manifest []byte) string {
	var pod corev1.Pod
	if err := yaml.Unmarshal(manifest, &pod); err != nil {
		return ""
	}
	for _, c := range pod.Spec.Containers {
		var dataDir string
		for _, a := range append(slices.Clone(c.Command), c.Args...) {
			if v, ok := strings.CutPrefix(a, "--data-dir="); ok {
				dataDir = path.Clean(v)
			}
		}
		if dataDir == "" {
			continue
		}
		for _, m := range c.VolumeMounts {
			rel, ok := strings.CutPrefix(dataDir, path.Clean(m.MountPath))
			if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
				continue
			}
			for _, v := range pod.Spec.Volumes {
				if v.Name == m.Name && v.HostPath != nil {
					return path.Join(v.HostPath.Path, rel)
				}
			}
		}
	}
	return ""
}
