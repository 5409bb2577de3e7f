package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/cka-lab/lab/internal/docker"
)

// Why a node's cgroup can stay frozen, found on this project's cgroup v1 machines (issue 26). Inside a kind
// node, only runc freezes cgroups, and always as freeze, change, thaw: a runc killed in between (its caller's
// deadline ran out on a loaded 2-core host, a Pod deleted while its container was being created) leaves the
// cgroup FROZEN for good, with `runc init` in the kernel's refrigerator as seen here. Two places do it on v1:
//   - the systemd cgroup driver (kind's default for containerd and the kubelet) freezes a container around every
//     update of its unit's properties, at `runc create` and at every `runc update` (a kubelet resize), because
//     systemd rewrites device rules disruptively (runc's systemd.legacyManager.Set and freezeBeforeSet). The fs
//     driver writes device rules without freezing, so lab runs cgroup v1 nodes with it (kindconfigs). The
//     kubelet's own Pod-level cgroups skip the freeze since Kubernetes 1.22 (SkipFreezeOnSet, kubernetes#104280).
//   - `runc kill --all` and `runc delete --force` without cgroup.kill (v1) freeze, signal every process, thaw
//     (runc's signalAllProcesses), whatever the driver.
// A frozen process cannot die, so killing the node container never ends: Docker reports "tried to kill
// container, but did not receive an exit event" (runc#2105) and the node can be neither stopped nor removed.
// Hence the thaw below, kept for the second case, for nodes made before the fs driver, and for cgroup v2.

// findFrozen lists, below the cgroup root given as $1 (cgroup v1: its freezer hierarchy), every cgroup frozen
// by itself (v1: freezer.self_freezing 1; v2: cgroup.freeze 1), one directory a line. The root itself is left
// out: a node container frozen as a whole is `docker pause`d, which is Docker's to undo.
const findFrozen = `root=$1
[ -d "$root/freezer" ] && root=$root/freezer
find "$root" -mindepth 2 \( -name freezer.self_freezing -o -name cgroup.freeze \) 2>/dev/null | while read -r f; do
  [ "$(cat "$f" 2>/dev/null)" = 1 ] && echo "${f%/*}"
done
exit 0`

// thawFrozen thaws every directory given after $0 (cgroup v1 or v2), parents first, and reports each.
const thawFrozen = `for d in "$@"; do
  if [ -f "$d/freezer.state" ]; then echo THAWED > "$d/freezer.state"; else echo 0 > "$d/cgroup.freeze"; fi && echo "thawed $d"
done`

// cgroupExecTimeout bounds each look into a node: a node whose own root cgroup is frozen does not run the
// exec at all, and lab then looks from the host's side.
const cgroupExecTimeout = 15 * time.Second

// FrozenCgroups lists the cgroups left frozen inside a node container.
func FrozenCgroups(ctx context.Context, container string) ([]string, error) {
	return frozenIn(ctx, container, false)
}

// ThawNode thaws every cgroup left frozen inside a node container and returns the cgroups it thawed.
func ThawNode(ctx context.Context, container string) ([]string, error) {
	return frozenIn(ctx, container, true)
}

// frozenIn finds the cgroups left frozen in a node and, with thaw, thaws them: from inside the node, or, when
// the node no longer runs an exec (its init was killed by a stop that could not finish), from the host's view
// of the node's cgroups. Paths are the node's own, or the host's.
func frozenIn(ctx context.Context, container string, thaw bool) ([]string, error) {
	shell := func(script string, args ...string) (string, error) { return nodeShell(ctx, container, script, args...) }
	out, err := shell(findFrozen, "/sys/fs/cgroup")
	rename := func(dir string) string { return dir }
	if err != nil {
		h, hostErr := newHostView(ctx, container)
		if hostErr == nil {
			shell = func(script string, args ...string) (string, error) { return h.shell(ctx, script, args...) }
			out, hostErr = shell(findFrozen, h.root)
		}
		if hostErr != nil {
			return nil, fmt.Errorf("look for frozen cgroups in %s: %w (and from the host: %w)", container, err, hostErr)
		}
		rename = hostPath
	}
	frozen := parentsFirst(lines(out))
	if thaw && len(frozen) > 0 {
		if _, err := shell(thawFrozen, frozen...); err != nil {
			return nil, fmt.Errorf("thaw %s in %s: %w", shortCgroups(frozen), container, err)
		}
	}
	for i, d := range frozen {
		frozen[i] = rename(d)
	}
	return frozen, nil
}

// ThawNodes thaws every node container of a cluster, best effort: it is what lab does before it stops or
// deletes them, and a node it cannot look into is left to the retry that follows a failed stop.
func ThawNodes(ctx context.Context, containers []string) (thawed map[string][]string, errs error) {
	thawed = map[string][]string{}
	for _, c := range containers {
		t, err := ThawNode(ctx, c)
		if err != nil {
			errs = errors.Join(errs, err)
			continue
		}
		if len(t) > 0 {
			thawed[c] = t
		}
	}
	return thawed, errs
}

// killFailed says whether Docker failed to stop or remove a container because a process in it would not
// die, which is what a frozen cgroup does.
func killFailed(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error() + dockerOutput(err)
	return strings.Contains(s, "did not receive an exit event") || strings.Contains(s, "tried to kill container")
}

// dockerOutput is what a docker command run by kind printed: kind keeps it out of the error's text.
func dockerOutput(err error) string {
	var run *kindexec.RunError
	if errors.As(err, &run) {
		return strings.TrimSpace(string(run.Output))
	}
	return ""
}

func nodeShell(ctx context.Context, container, script string, args ...string) (string, error) {
	out, err := docker.Output(ctx, cgroupExecTimeout, append([]string{"exec", container, "sh", "-c", script, "sh"}, args...)...)
	return string(out), err
}

// hostCgroupMount is where a host view's container sees the host's cgroup tree.
const hostCgroupMount = "/host-cgroup"

// hostView runs scripts in throwaway containers that see the host's processes and cgroup tree, made from the
// node's own image (present wherever the node is): that works for root and for a user in the docker group
// alike, and on an engine in a VM (Docker Desktop, WSL2), whose cgroup tree lab cannot read itself.
type hostView struct {
	image string
	// root is the node container's cgroup directory as the view sees it.
	root string
}

func newHostView(ctx context.Context, container string) (*hostView, error) {
	out, err := docker.Output(ctx, docker.Quick, "inspect", "--format", "{{.State.Pid}} {{.Image}}", container)
	if err != nil {
		return nil, err
	}
	f := strings.Fields(string(out))
	if len(f) != 2 || f[0] == "0" {
		return nil, fmt.Errorf("container %s has no process", container)
	}
	h := &hostView{image: f[1]}
	procCgroup, err := h.shell(ctx, `cat "/proc/$1/cgroup"`, f[0])
	if err != nil {
		return nil, err
	}
	if h.root, err = cgroupDir(hostCgroupMount, procCgroup); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *hostView) shell(ctx context.Context, script string, args ...string) (string, error) {
	out, err := docker.Output(ctx, docker.Lifecycle, append([]string{"run", "--rm", "--privileged", "--pid", "host",
		"--network", "none", "-v", "/sys/fs/cgroup:" + hostCgroupMount, "--entrypoint", "sh", h.image, "-c", script, "sh"}, args...)...)
	return string(out), err
}

// hostPath names a cgroup directory a host view found as the host does.
func hostPath(dir string) string {
	return "/sys/fs/cgroup" + strings.TrimPrefix(dir, hostCgroupMount)
}

// cgroupDir picks from /proc/PID/cgroup the directory whose subtree holds the freezer: the v1 freezer
// hierarchy's, else the v2 unified one's. A v1 node's root is its container's, not its init.scope.
func cgroupDir(mount, procCgroup string) (string, error) {
	var unified string
	for _, line := range strings.Split(strings.TrimSpace(procCgroup), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			unified = f[2]
		case containsController(f[1], "freezer"):
			return filepath.Join(mount, "freezer", f[2]), nil
		}
	}
	if unified == "" {
		return "", errors.New("no freezer or unified cgroup in /proc/PID/cgroup")
	}
	return filepath.Join(mount, strings.TrimSuffix(unified, "/init.scope")), nil
}

func containsController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// parentsFirst orders cgroups so that a parent is thawed before its children: in cgroup v1 a child of a
// frozen parent stays frozen whatever it is told.
func parentsFirst(dirs []string) []string {
	sort.Slice(dirs, func(i, j int) bool {
		di, dj := strings.Count(dirs[i], "/"), strings.Count(dirs[j], "/")
		if di != dj {
			return di < dj
		}
		return dirs[i] < dirs[j]
	})
	return dirs
}

// shortCgroup names a cgroup briefly for one line of output: from kubepods on (or its last two parts), with
// long IDs cut to 12 characters.
func shortCgroup(dir string) string {
	parts := strings.Split(strings.Trim(dir, "/"), "/")
	from := max(0, len(parts)-2)
	for i, p := range parts {
		if p == "kubepods" || strings.HasPrefix(p, "kubepods") {
			from = i
			break
		}
	}
	parts = parts[from:]
	for i, p := range parts {
		if len(p) > 16 {
			parts[i] = p[:12] + "…"
		}
	}
	return strings.Join(parts, "/")
}

func shortCgroups(dirs []string) string {
	short := make([]string, len(dirs))
	for i, d := range dirs {
		short[i] = shortCgroup(d)
	}
	return strings.Join(short, ", ")
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
