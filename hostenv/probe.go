package hostenv

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
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
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	// Lowering oom_score_adj is exactly what containerd does for every Pod sandbox.
	out, err := exec.CommandContext(ctx, DockerBinary, "run", "--rm", "--privileged", "--network", "none",
		"--entrypoint", "/bin/sh", image, "-c", "echo -998 > /proc/self/oom_score_adj && echo ok").CombinedOutput()
	switch {
	case err == nil && strings.Contains(string(out), "ok"):
	case strings.Contains(strings.ToLower(string(out)), "permission denied"):
		c.NoSysResource = true
	default:
		return c, fmt.Errorf("probe host with %s: %s: %w", image, strings.TrimSpace(string(out)), err)
	}
	return c, nil
}
