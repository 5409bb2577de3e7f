package hostenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// InotifyPerNode is about how many inotify instances one kind node holds (systemd, containerd, the kubelet and
// the Pods on it), measured on idle v1.35 nodes with headroom. Node containers share the host's kernel and run as
// root, so every node on the machine draws on root's one fs.inotify.max_user_instances budget; once it is spent,
// the next node's services fail with "too many open files" and its cluster never gets Ready.
const InotifyPerNode = 20

// RecommendedInotifyInstances is kind's documented setting for machines that run several clusters.
const RecommendedInotifyInstances = 512

// InotifyInstances reads fs.inotify.max_user_instances; -1 when the kernel does not say.
func InotifyInstances() int {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_instances")
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
