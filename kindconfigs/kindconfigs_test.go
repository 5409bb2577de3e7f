package kindconfigs

import (
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

func TestRenderDefault(t *testing.T) {
	cfg, err := Render(Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Nodes) != 2 || cfg.Nodes[0].Role != v1alpha4.ControlPlaneRole || cfg.Nodes[1].Role != v1alpha4.WorkerRole {
		t.Fatalf("nodes = %+v", cfg.Nodes)
	}
	if len(cfg.KubeadmConfigPatches) != 1 || len(cfg.ContainerdConfigPatches) != 0 {
		t.Fatalf("a host without special conditions gets only the node-lease patch: %+v", cfg)
	}
	if len(cfg.KubeadmConfigPatchesJSON6902) != 2 || !strings.Contains(cfg.KubeadmConfigPatchesJSON6902[0].Patch, "node-monitor-grace-period") {
		t.Errorf("controller-manager patch: %+v", cfg.KubeadmConfigPatchesJSON6902)
	}
}

func TestRenderHostPatches(t *testing.T) {
	cfg, err := Render(Options{Workers: 3, CgroupV1: true, NoSysResource: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Nodes) != 4 {
		t.Fatalf("want 4 nodes, got %d", len(cfg.Nodes))
	}
	if len(cfg.KubeadmConfigPatches) != 2 || !strings.Contains(cfg.KubeadmConfigPatches[1], "failCgroupV1: false") ||
		!strings.Contains(cfg.KubeadmConfigPatches[1], "cgroupDriver: cgroupfs") {
		t.Errorf("kubelet patch: %q", cfg.KubeadmConfigPatches)
	}
	// The kubelet's and containerd's cgroup drivers must agree, or no Pod sandbox starts.
	if len(cfg.ContainerdConfigPatches) != 2 || !strings.Contains(cfg.ContainerdConfigPatches[0], "SystemdCgroup = false") ||
		!strings.Contains(cfg.ContainerdConfigPatches[1], "restrict_oom_score_adj = true") {
		t.Errorf("containerd patches: %q", cfg.ContainerdConfigPatches)
	}
	cfg, err = Render(Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.KubeadmConfigPatches) != 1 || len(cfg.ContainerdConfigPatches) != 0 {
		t.Errorf("a cgroup v2 host with CAP_SYS_RESOURCE gets no host patch: %q %q", cfg.KubeadmConfigPatches, cfg.ContainerdConfigPatches)
	}
}

func TestRenderRejectsWorkers(t *testing.T) {
	for _, n := range []int{-1, MaxWorkers + 1} {
		if _, err := Render(Options{Workers: n}); err == nil || !strings.Contains(err.Error(), "--workers") {
			t.Errorf("workers=%d: %v", n, err)
		}
	}
}

func TestRenderAudit(t *testing.T) {
	cfg, err := Render(Options{Workers: 1, AuditDir: "/state/clusters/lab/audit"})
	if err != nil {
		t.Fatal(err)
	}
	// Both kubeadm versions get the flags and volumes, since kind picks one by the node image's Kubernetes.
	if len(cfg.KubeadmConfigPatchesJSON6902) != 4 {
		t.Fatalf("patches = %+v", cfg.KubeadmConfigPatchesJSON6902)
	}
	for _, p := range cfg.KubeadmConfigPatchesJSON6902[2:] {
		for _, want := range []string{"audit-policy-file", "audit-log-path", "audit-log-maxsize", "audit-log-maxbackup", "extraVolumes"} {
			if !strings.Contains(p.Patch, want) {
				t.Errorf("%s patch lacks %s", p.Version, want)
			}
		}
	}
	if m := cfg.Nodes[0].ExtraMounts; len(m) != 1 || m[0].HostPath != "/state/clusters/lab/audit" || m[0].ContainerPath != "/etc/kubernetes/audit" {
		t.Errorf("control-plane mounts = %+v", m)
	}
	if len(cfg.Nodes[1].ExtraMounts) != 0 {
		t.Errorf("a worker mounts nothing: %+v", cfg.Nodes[1].ExtraMounts)
	}
	if !strings.Contains(string(AuditPolicy), "kind: Policy") {
		t.Errorf("audit policy: %s", AuditPolicy)
	}
}
