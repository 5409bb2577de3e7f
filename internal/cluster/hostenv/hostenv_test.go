package hostenv

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClassifyDockerError(t *testing.T) {
	cases := []struct {
		out  string
		want error
	}{
		{"permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Get \"http://%2Fvar%2Frun%2Fdocker.sock/v1.47/info\": dial unix /var/run/docker.sock: connect: permission denied", ErrDockerPermission},
		{"Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?", ErrDockerNotRunning},
		{"error during connect: Get \"http://%2Ftmp%2Fnone.sock/v1.47/info\": dial unix /tmp/none.sock: connect: no such file or directory", ErrDockerNotRunning},
	}
	for _, c := range cases {
		if got := ClassifyDockerError(c.out); !errors.Is(got, c.want) {
			t.Errorf("ClassifyDockerError(%q) = %v, want %v", c.out, got, c.want)
		}
	}
	if got := ClassifyDockerError("something odd\nmore"); !strings.Contains(got.Error(), "something odd") || strings.Contains(got.Error(), "\n") {
		t.Errorf("unknown errors keep docker's first line on one line, got %q", got)
	}
}

func TestCheckMemory(t *testing.T) {
	if err := CheckMemory(8<<30, 1); err != nil {
		t.Errorf("8 GiB for 2 nodes: %v", err)
	}
	if err := CheckMemory(-1, 100); err != nil {
		t.Errorf("unknown memory must not block: %v", err)
	}
	err := CheckMemory(1<<30, 3)
	if err == nil || !strings.Contains(err.Error(), "too little free memory: 1.0 GiB free, a lab cluster with 4 node(s) needs 2.7 GiB") {
		t.Errorf("1 GiB for 4 nodes: %v", err)
	}
}

func TestParseMemAvailable(t *testing.T) {
	in := "MemTotal:       24576000 kB\nMemFree:        100 kB\nMemAvailable:   2048 kB\n"
	if got := parseMemAvailable(bufio.NewScanner(strings.NewReader(in))); got != 2048<<10 {
		t.Errorf("got %d", got)
	}
	if got := parseMemAvailable(bufio.NewScanner(strings.NewReader("MemTotal: 1 kB\n"))); got != -1 {
		t.Errorf("missing MemAvailable: got %d", got)
	}
}

func TestMemoryPerNodeOverride(t *testing.T) {
	t.Setenv("LAB_MEMORY_PER_NODE", "1Gi")
	if got := MemoryNeeded(2); got != 3<<30 {
		t.Errorf("3 nodes at 1Gi: got %d", got)
	}
	t.Setenv("LAB_MEMORY_PER_NODE", "not-a-quantity")
	if got := MemoryNeeded(1); got != controlPlaneMemory+workerMemory {
		t.Errorf("an invalid override is ignored: got %d", got)
	}
}

func TestParseCapEff(t *testing.T) {
	eff, err := parseCapEff("CapEff:\t0000003ffeffffff\n")
	if err != nil || eff&(1<<capSysResource) != 0 {
		t.Errorf("a host without CAP_SYS_RESOURCE: %x, %v", eff, err)
	}
	eff, _ = parseCapEff("CapEff:\t000001ffffffffff\n")
	if eff&(1<<capSysResource) == 0 {
		t.Errorf("full set must include CAP_SYS_RESOURCE: %x", eff)
	}
	if _, err := parseCapEff("nothing"); err == nil {
		t.Error("missing CapEff must be an error")
	}
}

func TestCheckInotify(t *testing.T) {
	if err := CheckInotify(128, 4, 2); err != nil {
		t.Errorf("three 2-node clusters fit in 128: %v", err)
	}
	err := CheckInotify(128, 6, 2)
	if err == nil || !strings.Contains(err.Error(), "fs.inotify.max_user_instances is 128, too few for 2 more kind node(s) beside the 6 running") ||
		!strings.Contains(err.Error(), "sysctl -w fs.inotify.max_user_instances=512") {
		t.Errorf("fourth cluster: %v", err)
	}
	if err := CheckInotify(-1, 100, 2); err != nil {
		t.Errorf("unknown limit: %v", err)
	}
	if err := CheckInotify(RecommendedInotifyInstances, 18, 2); err != nil {
		t.Errorf("ten clusters at kind's recommendation: %v", err)
	}
}

func TestCheckDisk(t *testing.T) {
	if err := CheckDisk(DiskNeeded(1), "/var/lib/docker", 1); err != nil {
		t.Errorf("exactly enough: %v", err)
	}
	if err := CheckDisk(-1, "/var/lib/docker", 9); err != nil {
		t.Errorf("unknown free space must not block: %v", err)
	}
	err := CheckDisk(5<<30, "/data/docker", 3)
	if err == nil || !strings.Contains(err.Error(), "5.0 GiB free in Docker's data root /data/docker, a lab cluster with 4 node(s) needs 6.0 GiB") ||
		!strings.Contains(err.Error(), "docker system prune") {
		t.Errorf("4 nodes in 5 GiB: %v", err)
	}
}

func TestFreeDiskOnlyOnThisHost(t *testing.T) {
	dir := t.TempDir()
	if got := FreeDisk(Docker{DockerRootDir: dir}); got != -1 {
		t.Errorf("an engine elsewhere: its data root is not this host's to measure, got %d", got)
	}
	if got := FreeDisk(Docker{DockerRootDir: dir, OnThisHost: true}); got <= 0 {
		t.Errorf("a local data root has free space, got %d", got)
	}
}

func TestSysctlOverride(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "fs", "inotify"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fs", "inotify", "max_user_instances"), []byte("128\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ProcSysEnv, dir)
	if got := InotifyInstances(); got != 128 {
		t.Errorf("instances from %s: got %d", ProcSysEnv, got)
	}
	if got := InotifyWatches(); got != -1 {
		t.Errorf("a missing setting is unknown: got %d", got)
	}
}

func TestPlatform(t *testing.T) {
	for arch, want := range map[string]string{"x86_64": "linux/amd64", "aarch64": "linux/arm64", "riscv64": "linux/riscv64"} {
		if got := (Docker{OSType: "linux", Architecture: arch}).Platform(); got != want {
			t.Errorf("%s: got %s, want %s", arch, got, want)
		}
	}
}
