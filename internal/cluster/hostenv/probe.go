package hostenv

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cka-lab/lab/internal/docker"
)

// Conditions are the host facts that change how a kind node must be configured.
type Conditions struct {
	// CgroupV1: Kubernetes >= 1.35 kubelets refuse cgroup v1 unless failCgroupV1 is false.
	CgroupV1 bool
	// NoSysResource: without CAP_SYS_RESOURCE nothing may lower oom_score_adj, so containerd must clamp Pod
	// sandboxes to its own value (restrict_oom_score_adj) or every sandbox fails.
	NoSysResource bool
}

// Probe reads the conditions from the engine itself, so it is right for remote and VM-backed engines too.
// image must be present locally: it runs one throwaway privileged container from it.
func Probe(ctx context.Context, d Docker, image string) (Conditions, error) {
	c := Conditions{CgroupV1: d.CgroupVersion == "1"}
	// A privileged container gets what the engine can grant: CAP_SYS_RESOURCE in its effective set is what
	// containerd inside a node needs to lower a sandbox's oom_score_adj.
	out, err := docker.Output(ctx, time.Minute, "run", "--rm", "--privileged", "--network", "none",
		"--entrypoint", "/bin/sh", image, "-c", "grep CapEff /proc/self/status")
	if err != nil {
		return c, fmt.Errorf("probe host with %s: %w", image, err)
	}
	eff, err := parseCapEff(string(out))
	if err != nil {
		return c, fmt.Errorf("probe host with %s: %w", image, err)
	}
	c.NoSysResource = eff&(1<<capSysResource) == 0
	return c, nil
}

// capSysResource is CAP_SYS_RESOURCE's bit number (linux/capability.h).
const capSysResource = 24

func parseCapEff(status string) (uint64, error) {
	for _, line := range strings.Split(status, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "CapEff:" {
			return strconv.ParseUint(f[1], 16, 64)
		}
	}
	return 0, fmt.Errorf("no CapEff in %q", strings.TrimSpace(status))
}
