package hostenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// InotifyPerNode is about how many inotify instances one kind node holds (systemd, containerd, the kubelet and
// the Pods on it), measured on idle v1.35 nodes with headroom. Node containers share the host's kernel and run as
// root, so every node on the machine draws on root's one fs.inotify.max_user_instances budget; once it is spent,
// the next node's services fail with "too many open files" and its cluster never gets Ready.
const InotifyPerNode = 20

// kind's documented settings for machines that run several clusters (its known issues, "Pod errors due to
// too many open files").
const (
	RecommendedInotifyInstances = 512
	RecommendedInotifyWatches   = 524288
)

// ProcSysEnv names another directory to read kernel settings from instead of /proc/sys: a hook for tests and
// demonstrations (hack/doctor-problems.sh) that show lab on limits this machine does not have.
const ProcSysEnv = "LAB_PROC_SYS"

// InotifyInstances reads fs.inotify.max_user_instances; -1 when the kernel does not say.
func InotifyInstances() int { return sysctl("fs/inotify/max_user_instances") }

// InotifyWatches reads fs.inotify.max_user_watches; -1 when the kernel does not say.
func InotifyWatches() int { return sysctl("fs/inotify/max_user_watches") }

func sysctl(name string) int {
	root := "/proc/sys"
	if r := os.Getenv(ProcSysEnv); r != "" {
		root = r
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// CheckInotify refuses a cluster of newNodes nodes when, beside the running kind nodes, root's inotify budget
// (limit < 0: unknown) would run out.
func CheckInotify(limit, running, newNodes int) error {
	need := (running + newNodes) * InotifyPerNode
	if limit < 0 || need <= limit {
		return nil
	}
	return fmt.Errorf("fs.inotify.max_user_instances is %d, too few for %d more kind node(s) beside the %d running "+
		"(each holds about %d): raise it (`sudo sysctl -w fs.inotify.max_user_instances=%d`) or delete clusters you do not use",
		limit, newNodes, running, InotifyPerNode, RecommendedInotifyInstances)
}
