package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/cka-lab/lab/internal/docker"
)

// Why a node's cgroup can stay frozen, found on this project's cgroup v1 machines (issue 26): kind's nodes run
// containerd and the kubelet with the systemd cgroup driver, and runc's systemd driver on cgroup v1 freezes a
// container's cgroup around every update of its systemd unit properties (opencontainers/cgroups,
// systemd.LegacyManager.Set and freezeBeforeSet: systemd rewrites device rules disruptively, so runc freezes
// to spare the container spurious EPERMs) and thaws it afterwards. When runc is killed between the two (its
// caller's deadline ran out on a loaded 2-core host, a Pod deleted while its container was being created),
// the cgroup stays FROZEN with `runc init` in the kernel's refrigerator. Its processes then cannot die: Docker
// reports "tried to kill container, but did not receive an exit event" and the node container can be neither
// stopped nor removed. The fs driver applies device rules without freezing, so lab runs cgroup v1 nodes with
// it (kindconfigs); the thaw below remains for nodes made before that and for cgroup v2's cgroup.freeze.

// findFrozen lists, below the cgroup root given as $1, every cgroup frozen by itself (cgroup v1:
// freezer.self_freezing 1; cgroup v2: cgroup.freeze 1), one directory a line. The root itself is left out: a
// node container frozen as a whole is `docker pause`d, which is Docker's to undo.
const findFrozen = `root=$1
find "$root" -mindepth 2 \( -name freezer.self_freezing -o -name cgroup.freeze \) 2>/dev/null | while read -r f; do
  [ "$(cat "$f" 2>/dev/null)" = 1 ] && echo "${f%/*}"
done
exit 0`

// thawFrozen thaws every directory given after $0 (cgroup v1 or v2), parents first, and reports each.
const thawFrozen = `for d in "$@"; do
  if [ -f "$d/freezer.state" ]; then echo THAWED > "$d/freezer.state"; else echo 0 > "$d/cgroup.freeze"; fi && echo "thawed $d"
done`

// cgroupExecTimeout bounds each look into a node: a node whose own root cgroup is frozen does not run the
// exec at all, and lab then tries the host's view of the same cgroups.
const cgroupExecTimeout = 15 * time.Second

// FrozenCgroups lists the cgroups left frozen inside a node container, as paths inside the node.
func FrozenCgroups(ctx context.Context, container string) ([]string, error) {
	out, err := nodeShell(ctx, container, findFrozen, "/sys/fs/cgroup")
	if err == nil {
		return lines(out), nil
	}
	root, hostErr := hostCgroupRoot(ctx, container)
	if hostErr != nil {
		return nil, fmt.Errorf("look for frozen cgroups in %s: %w (and on the host: %w)", container, err, hostErr)
	}
	out, hostErr = hostShell(ctx, findFrozen, root)
	if hostErr != nil {
		return nil, fmt.Errorf("look for frozen cgroups in %s: %w (and on the host: %w)", container, err, hostErr)
	}
	return lines(out), nil
}

// ThawNode thaws every cgroup left frozen inside a node container, from inside the node or, when the node
// does not answer, through the host's cgroup tree. It returns the cgroups it thawed.
func ThawNode(ctx context.Context, container string) ([]string, error) {
	out, err := nodeShell(ctx, container, findFrozen, "/sys/fs/cgroup")
	if err == nil {
		frozen := parentsFirst(lines(out))
		if len(frozen) == 0 {
			return nil, nil
		}
		if _, err := nodeShell(ctx, container, thawFrozen, frozen...); err != nil {
			return nil, fmt.Errorf("thaw %s in %s: %w", strings.Join(frozen, ", "), container, err)
		}
		return frozen, nil
	}
	root, hostErr := hostCgroupRoot(ctx, container)
	if hostErr != nil {
		return nil, fmt.Errorf("thaw cgroups of %s: %w (and on the host: %w)", container, err, hostErr)
	}
	out, hostErr = hostShell(ctx, findFrozen, root)
	if hostErr != nil {
		return nil, fmt.Errorf("thaw cgroups of %s: %w (and on the host: %w)", container, err, hostErr)
	}
	frozen := parentsFirst(lines(out))
	if len(frozen) == 0 {
		return nil, nil
	}
	if _, err := hostShell(ctx, thawFrozen, frozen...); err != nil {
		return nil, fmt.Errorf("thaw %s of %s on the host: %w", strings.Join(frozen, ", "), container, err)
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

func hostShell(ctx context.Context, script string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, cgroupExecTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", append([]string{"-c", script, "sh"}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("sh: %s: %w", strings.TrimSpace(string(out)), err)
	}
	return string(out), nil
}

// hostCgroupRoot is the node container's cgroup directory on this host: its freezer hierarchy's on cgroup v1,
// its unified one on v2. It works only where lab runs beside the Docker engine with the host's /sys/fs/cgroup.
func hostCgroupRoot(ctx context.Context, container string) (string, error) {
	out, err := docker.Output(ctx, cgroupExecTimeout, "inspect", "--format", "{{.State.Pid}}", container)
	if err != nil {
		return "", err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid <= 0 {
		return "", fmt.Errorf("container %s has no process", container)
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", fmt.Errorf("read the cgroups of %s: %w", container, err)
	}
	return cgroupDir("/sys/fs/cgroup", string(data))
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
