package framework

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cka-lab/lab/internal/docker"
)

// childCPU is the CPU time of every command this process ran and waited for (lab, kubectl, a step's shell),
// their own children included.
var childCPU atomic.Int64

func addChildCPU(cmd *exec.Cmd) {
	if s := cmd.ProcessState; s != nil {
		childCPU.Add(int64(s.UserTime() + s.SystemTime()))
	}
}

// CPU is the CPU time spent so far on this process's behalf: by its cluster's node containers (everything
// the cluster runs: control plane, kubelet, containerd, the CNI, the Pods) and by the commands it ran. The
// host's Docker daemon, shared by every process, is left out. On a machine whose CPU is the bottleneck, this
// is what a spec costs the suite, whatever the other processes did meanwhile.
func (l *Lab) CPU() time.Duration {
	return time.Duration(childCPU.Load()) + l.clusterCPU()
}

func (l *Lab) clusterCPU() time.Duration {
	out, err := docker.Output(context.Background(), docker.Quick, "ps", "-q", "--no-trunc", "--filter", "label=io.x-k8s.kind.cluster="+l.Cluster)
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, id := range strings.Fields(string(out)) {
		total += containerCPU(id)
	}
	return total
}

// containerCPU reads a container's CPU time from its cgroup: cgroup v1 (cpuacct, nanoseconds) or v2 (cpu.stat,
// microseconds), with Docker's cgroupfs or systemd driver.
func containerCPU(id string) time.Duration {
	if b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpuacct/docker", id, "cpuacct.usage")); err == nil {
		ns, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return time.Duration(ns)
	}
	for _, dir := range []string{"/sys/fs/cgroup/system.slice/docker-" + id + ".scope", "/sys/fs/cgroup/docker/" + id} {
		b, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
				us, _ := strconv.ParseInt(v, 10, 64)
				return time.Duration(us) * time.Microsecond
			}
		}
	}
	return 0
}
