// Package kindconfigs holds the kind cluster configurations lab creates, as embedded data, and renders them for
// a host: the number of workers and the patches some hosts need.
package kindconfigs

import (
	_ "embed"
	"fmt"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

var (
	//go:embed lab.yaml
	labConfig []byte
	//go:embed cgroupv1-kubelet.yaml
	cgroupV1Patch string
	//go:embed cgroupv1-containerd.toml
	cgroupV1ContainerdPatch string
	//go:embed restrict-oom-score-adj.toml
	restrictOOMPatch string
	//go:embed audit.yaml
	auditConfig []byte
	// AuditPolicy is the API server's audit policy: lab writes it as AuditPolicyFile into Options.AuditDir.
	//go:embed audit-policy.yaml
	AuditPolicy []byte
)

// AuditPolicyFile is the name of the audit policy in Options.AuditDir, and AuditLogDir where the control-plane
// node keeps the log (the API server's --audit-log-path is AuditLogDir/audit.log, its backups beside it).
const (
	AuditPolicyFile = "policy.yaml"
	AuditLogDir     = "/var/log/kubernetes/audit"
)

// Options say what to render.
type Options struct {
	Workers int
	// CgroupV1 adds the kubelet and containerd cgroup v1 patches; NoSysResource adds the oom_score_adj patch.
	CgroupV1      bool
	NoSysResource bool
	// AuditDir is the host directory holding AuditPolicyFile; when set, the API server keeps an audit log.
	AuditDir string
}

// MaxWorkers keeps --workers to what a laptop can hold; the memory check refines it.
const MaxWorkers = 8

// Render returns the cluster config for o.
func Render(o Options) (*v1alpha4.Cluster, error) {
	if o.Workers < 0 || o.Workers > MaxWorkers {
		return nil, fmt.Errorf("--workers must be between 0 and %d, got %d", MaxWorkers, o.Workers)
	}
	cfg := &v1alpha4.Cluster{}
	if err := yaml.UnmarshalStrict(labConfig, cfg); err != nil {
		return nil, fmt.Errorf("embedded kind config: %w", err)
	}
	controlPlanes := []v1alpha4.Node{}
	for _, n := range cfg.Nodes {
		if n.Role == v1alpha4.ControlPlaneRole {
			controlPlanes = append(controlPlanes, n)
		}
	}
	if o.AuditDir != "" {
		audit := &v1alpha4.Cluster{}
		if err := yaml.UnmarshalStrict(auditConfig, audit); err != nil {
			return nil, fmt.Errorf("embedded audit config: %w", err)
		}
		cfg.KubeadmConfigPatchesJSON6902 = append(cfg.KubeadmConfigPatchesJSON6902, audit.KubeadmConfigPatchesJSON6902...)
		for i := range controlPlanes {
			controlPlanes[i].ExtraMounts = append(controlPlanes[i].ExtraMounts,
				v1alpha4.Mount{HostPath: o.AuditDir, ContainerPath: "/etc/kubernetes/audit", Readonly: true})
		}
	}
	cfg.Nodes = controlPlanes
	for range o.Workers {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole})
	}
	if o.CgroupV1 {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, cgroupV1Patch)
		cfg.ContainerdConfigPatches = append(cfg.ContainerdConfigPatches, cgroupV1ContainerdPatch)
	}
	if o.NoSysResource {
		cfg.ContainerdConfigPatches = append(cfg.ContainerdConfigPatches, restrictOOMPatch)
	}
	return cfg, nil
}
