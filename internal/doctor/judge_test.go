package doctor

import (
	"errors"
	"strings"
	"testing"

	"github.com/cka-lab/lab/internal/cluster/hostenv"
	"github.com/cka-lab/lab/internal/tools"
)

const gib1 = 1 << 30

// healthy is a Linux machine that can run lab: every check passes.
func healthy() Facts {
	var comps []Component
	for _, c := range tools.Components() {
		comps = append(comps, Component{Component: c, Path: "/opt/lab/bin/" + c.Name})
	}
	return Facts{
		HostOS: "linux", HostArch: "amd64",
		Docker: hostenv.Docker{ServerVersion: "28.1.1", OperatingSystem: "Debian GNU/Linux 12", CgroupVersion: "2", NCPU: 4, MemTotal: 16 * gib1,
			OSType: "linux", Architecture: "x86_64", DockerRootDir: "/var/lib/docker", OnThisHost: true},
		FreeMemory: 12 * gib1, FreeDisk: 80 * gib1,
		InotifyInstances: 512, InotifyWatches: 524288, RunningNodes: 0,
		NodeImage: "kindest/node:v1.35.4", KubernetesVersion: "v1.35.4",
		Kubectl:    Kubectl{Path: "/usr/bin/kubectl", Version: "v1.35.0"},
		Components: comps, Workers: 1,
	}
}

func find(t *testing.T, r Report, check string) Result {
	t.Helper()
	for _, c := range r.Checks {
		if c.Check == check {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", check, r.Checks)
	return Result{}
}

// want asserts one check's verdict, that its message holds each of msg, and that its fix holds fix.
func want(t *testing.T, f Facts, check string, status Status, fix string, msg ...string) {
	t.Helper()
	got := find(t, Judge(f), check)
	if got.Status != status {
		t.Errorf("%s: status %s, want %s (%s)", check, got.Status, status, got.Message)
	}
	for _, m := range msg {
		if !strings.Contains(got.Message, m) {
			t.Errorf("%s: message %q lacks %q", check, got.Message, m)
		}
	}
	if !strings.Contains(got.Fix, fix) || (fix == "" && got.Fix != "") {
		t.Errorf("%s: fix %q, want %q", check, got.Fix, fix)
	}
	if strings.Contains(got.Message, "\n") || strings.Contains(got.Fix, "\n") {
		t.Errorf("%s: one line each: %q, %q", check, got.Message, got.Fix)
	}
}

func TestHealthyMachine(t *testing.T) {
	r := Judge(healthy())
	if r.Problems != 0 || r.Warnings != 0 {
		t.Errorf("a healthy machine: %+v", r)
	}
	for _, c := range r.Checks {
		if c.Status != OK || c.Fix != "" {
			t.Errorf("%s: %s %q fix %q", c.Check, c.Status, c.Message, c.Fix)
		}
	}
}

func TestDocker(t *testing.T) {
	f := healthy()
	want(t, f, "docker", OK, "", "Docker 28.1.1 reachable")

	f.DockerErr = hostenv.ErrDockerNotInstalled
	f.Podman = true
	want(t, f, "docker", Problem, "sudo apt-get install docker.io", "docker not found", "podman is")
	f.HostOS = "darwin"
	want(t, f, "docker", Problem, "Docker Desktop", "docker not found")

	f = healthy()
	f.DockerErr = hostenv.ErrDockerNotRunning
	want(t, f, "docker", Problem, "sudo systemctl start docker", "not running")
	f.DockerHost = "unix:///nonexistent.sock"
	want(t, f, "docker", Problem, "unset DOCKER_HOST", "DOCKER_HOST=unix:///nonexistent.sock")

	f = healthy()
	f.DockerErr = hostenv.ErrDockerPermission
	want(t, f, "docker", Problem, "usermod -aG docker", "permission denied")
	f.DockerErr = errors.New("docker is not usable (odd): check `docker info` and try again")
	want(t, f, "docker", Problem, "docker info", "odd")

	// What needs the engine is not judged without it, and does not count as a problem of its own.
	r := Judge(f)
	for _, c := range []string{"docker-resources", "disk", "cgroup", "platform"} {
		if got := find(t, r, c); got.Status != Unknown {
			t.Errorf("%s without Docker: %s", c, got.Status)
		}
	}
	if r.Problems != 1 {
		t.Errorf("Docker unreachable is one problem, got %d", r.Problems)
	}
}

func TestDockerResources(t *testing.T) {
	f := healthy()
	want(t, f, "docker-resources", OK, "", "4 CPU(s) and 16.0 GiB", "needs 2 CPUs and 1.7 GiB")
	f.Docker.NCPU = 1
	want(t, f, "docker-resources", Problem, "at least 2 CPUs", "1 CPU(s)")
	f = healthy()
	f.Docker.MemTotal, f.Docker.OnThisHost = gib1, false
	want(t, f, "docker-resources", Problem, "Docker Desktop > Settings > Resources", "1.0 GiB memory")
	f.Workers = 3
	want(t, f, "docker-resources", Problem, "Docker Desktop", "4 node(s) needs 2 CPUs and 2.7 GiB")
}

func TestMemory(t *testing.T) {
	f := healthy()
	want(t, f, "memory", OK, "", "12.0 GiB memory free", "2 node(s) needs 1.7 GiB", "715 MiB")
	f.FreeMemory = gib1
	want(t, f, "memory", Problem, "lab cluster delete", "1.0 GiB memory free")
	f.FreeMemory = -1
	f.HostOS = "darwin"
	want(t, f, "memory", Unknown, "", "not measured on darwin")
}

func TestDisk(t *testing.T) {
	f := healthy()
	want(t, f, "disk", OK, "", "80.0 GiB disk free in Docker's data root /var/lib/docker", "needs 4.0 GiB")
	f.FreeDisk = 3 * gib1
	want(t, f, "disk", Problem, "docker system prune", "3.0 GiB disk free")
	f.FreeDisk, f.Docker.OnThisHost = -1, false
	want(t, f, "disk", Unknown, "", "not this one")
}

func TestInotify(t *testing.T) {
	f := healthy()
	want(t, f, "inotify", OK, "", "max_user_instances 512", "25 kind nodes")

	f.InotifyInstances, f.InotifyWatches, f.RunningNodes = 128, 192543, 2
	want(t, f, "inotify", Problem, "sudo sysctl -w fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=524288",
		"fs.inotify.max_user_instances is 128 (kind recommends 512)", "max_user_watches is 192543", "6 kind nodes, 2 running")

	// Only what is low is raised: a higher setting is never lowered to kind's.
	f.InotifyWatches = 1 << 20
	want(t, f, "inotify", Problem, "sudo sysctl -w fs.inotify.max_user_instances=512", "max_user_instances is 128")
	if got := find(t, Judge(f), "inotify"); strings.Contains(got.Fix, "watches") {
		t.Errorf("fix lowers the watches: %q", got.Fix)
	}

	// With the budget spent, it says the next cluster will not fit, as lab cluster create does.
	f.RunningNodes = 6
	want(t, f, "inotify", Problem, "max_user_instances=512", "too few for 2 more node(s)")

	f = healthy()
	f.InotifyWatches = -1
	want(t, f, "inotify", Unknown, "", "not readable")
	f = healthy()
	f.Docker.OnThisHost = false
	want(t, f, "inotify", Unknown, "", "another kernel")
}

func TestCgroup(t *testing.T) {
	f := healthy()
	want(t, f, "cgroup", OK, "", "cgroup v2")
	f.Docker.CgroupVersion = "1"
	want(t, f, "cgroup", Warning, "systemd.unified_cgroup_hierarchy=1", "failCgroupV1")
	if r := Judge(f); r.Problems != 0 || r.Warnings != 1 {
		t.Errorf("cgroup v1 works: a warning, not a problem: %+v", r)
	}
}

func TestPlatform(t *testing.T) {
	f := healthy()
	want(t, f, "platform", OK, "", "nodes run linux/amd64")
	f.Docker.Architecture = "aarch64"
	want(t, f, "platform", Problem, "GOARCH=arm64 make build", "nodes run linux/arm64, this lab is a linux/amd64 build")
	f.HostOS, f.HostArch = "darwin", "arm64"
	want(t, f, "platform", Warning, "run lab on Linux", "this lab is a darwin/arm64 build", "need lab for linux/arm64")
	f.Docker.OSType = "windows"
	want(t, f, "platform", Problem, "-SwitchLinuxEngine", "Docker runs windows containers")
}

func TestKubectl(t *testing.T) {
	f := healthy()
	want(t, f, "kubectl", OK, "", "kubectl v1.35.0", "Kubernetes v1.35.4")
	for _, v := range []string{"v1.34.2", "v1.36.0"} {
		f.Kubectl.Version = v
		want(t, f, "kubectl", OK, "", "within kubectl's ±1")
	}
	f.Kubectl.Version = "v1.32.4-dispatcher"
	want(t, f, "kubectl", Problem, "https://dl.k8s.io/release/v1.35.4/bin/linux/amd64/kubectl", "3 minor versions older")
	f.Kubectl.Version = "v1.37.1"
	want(t, f, "kubectl", Problem, "sudo install", "2 minor versions newer")
	f.Kubectl = Kubectl{}
	f.HostOS, f.HostArch = "windows", "arm64"
	want(t, f, "kubectl", Problem, "curl.exe -fLo kubectl.exe https://dl.k8s.io/release/v1.35.4/bin/windows/arm64/kubectl.exe", "not found")
	f = healthy()
	f.NodeImage, f.KubernetesVersion = "my/node:latest", ""
	want(t, f, "kubectl", Unknown, "", "my/node:latest")
	f.Kubectl.Err = errors.New("exit status 1")
	want(t, f, "kubectl", Unknown, "", "exit status 1")
}

func TestComponents(t *testing.T) {
	f := healthy()
	for i := range f.Components {
		f.Components[i].Path = ""
	}
	r := Judge(f)
	if r.Problems != 0 || r.Warnings != 2 {
		t.Errorf("without components: helm and etcdutl warn, the images are pulled: %+v", r)
	}
	want(t, f, "helm", Warning, "make helm && export LAB_HELM=$PWD/bin/helm-v4.3.2", "helm v4.3.2: not found", "cannot start")
	want(t, f, "traefik", OK, "", "lab pulls its upstream image")
	f.Components[0].Err = errors.New("LAB_HELM names no helm binary")
	want(t, f, "helm", Problem, "make helm", "LAB_HELM names no helm binary")
}
