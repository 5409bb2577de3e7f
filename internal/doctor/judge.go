package doctor

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cka-lab/lab/internal/cluster/hostenv"
)

// Status is a check's verdict.
type Status string

// The verdicts. Only a Problem makes `lab doctor` fail: a Warning works with a limit worth knowing, and
// Unknown could not be measured from here.
const (
	OK      Status = "ok"
	Warning Status = "warning"
	Problem Status = "problem"
	Unknown Status = "unknown"
)

// Result is one check: what was found, in one line, and for a problem or a warning the one command that
// fixes it.
type Result struct {
	Check   string `json:"check"`
	Status  Status `json:"status"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// Report is every check in the order a learner fixes them: Docker first, since most others read it.
type Report struct {
	Checks   []Result `json:"checks"`
	Problems int      `json:"problems"`
	Warnings int      `json:"warnings"`
}

// Judge decides every check from the facts.
func Judge(f Facts) Report {
	var r Report
	r.Checks = append(r.Checks, docker(f), dockerResources(f), memory(f), disk(f), inotify(f), cgroup(f), platform(f), kubectl(f))
	for _, c := range f.Components {
		r.Checks = append(r.Checks, component(c))
	}
	for _, c := range r.Checks {
		switch c.Status {
		case Problem:
			r.Problems++
		case Warning:
			r.Warnings++
		}
	}
	return r
}

func docker(f Facts) Result {
	r := Result{Check: "docker", Status: Problem}
	switch err := f.DockerErr; {
	case err == nil:
		return Result{Check: r.Check, Status: OK, Message: fmt.Sprintf("Docker %s reachable (%s)", f.Docker.ServerVersion, f.Docker.OperatingSystem)}
	case errors.Is(err, hostenv.ErrDockerNotInstalled):
		r.Message, r.Fix = "docker not found on PATH", installDocker(f.HostOS)
		if f.Podman {
			r.Message += " (podman is, but lab drives kind's Docker provider)"
		}
	case errors.Is(err, hostenv.ErrDockerNotRunning) && f.DockerHost != "":
		r.Message, r.Fix = fmt.Sprintf("no Docker daemon answers at DOCKER_HOST=%s", f.DockerHost), "unset DOCKER_HOST"
	case errors.Is(err, hostenv.ErrDockerNotRunning):
		r.Message, r.Fix = "the Docker daemon is not running", startDocker(f.HostOS)
	case errors.Is(err, hostenv.ErrDockerPermission):
		r.Message, r.Fix = "permission denied on the Docker socket", "sudo usermod -aG docker $USER   # then log in again"
	default:
		r.Message, r.Fix = err.Error(), "docker info"
	}
	return r
}

func installDocker(goos string) string {
	if goos == "linux" {
		return "sudo apt-get install docker.io   # Debian, Ubuntu; others: https://docs.docker.com/engine/install/"
	}
	return "install Docker Desktop: https://docs.docker.com/desktop/"
}

func startDocker(goos string) string {
	switch goos {
	case "linux":
		return "sudo systemctl start docker"
	case "darwin":
		return "open -a Docker"
	}
	return "start Docker Desktop"
}

// notChecked is the verdict on what needs an engine that did not answer.
func notChecked(check, what string) Result {
	return Result{Check: check, Status: Unknown, Message: what + ": not checked, Docker is not reachable"}
}

// minCPUs is kubeadm's minimum for a control plane; the README's figures come from a 2-CPU machine.
const minCPUs = 2

func dockerResources(f Facts) Result {
	const check = "docker-resources"
	if f.DockerErr != nil {
		return notChecked(check, "Docker's CPUs and memory")
	}
	need := hostenv.MemoryNeeded(f.Workers)
	msg := fmt.Sprintf("Docker has %d CPU(s) and %s memory; a lab cluster with %d node(s) needs %d CPUs and %s",
		f.Docker.NCPU, gib(f.Docker.MemTotal), f.Workers+1, minCPUs, gib(need))
	if f.Docker.NCPU >= minCPUs && f.Docker.MemTotal >= need {
		return Result{Check: check, Status: OK, Message: msg}
	}
	fix := fmt.Sprintf("run lab on a machine with at least %d CPUs and %s memory", minCPUs, gib(need))
	if !f.Docker.OnThisHost {
		fix = "give Docker's VM more: Docker Desktop > Settings > Resources"
	}
	return Result{Check: check, Status: Problem, Message: msg, Fix: fix}
}

func memory(f Facts) Result {
	const check = "memory"
	if f.FreeMemory < 0 {
		return Result{Check: check, Status: Unknown, Message: "free memory: not measured on " + f.HostOS + " (Docker's memory, above, is what the nodes get)"}
	}
	// The same decision `lab cluster create` makes before it starts a node.
	msg := fmt.Sprintf("%s memory free; a lab cluster with %d node(s) needs %s (2 nodes idle at about 715 MiB, with room for the scenarios' Pods)",
		gib(f.FreeMemory), f.Workers+1, gib(hostenv.MemoryNeeded(f.Workers)))
	if hostenv.CheckMemory(f.FreeMemory, f.Workers) == nil {
		return Result{Check: check, Status: OK, Message: msg}
	}
	return Result{Check: check, Status: Problem, Message: msg, Fix: "lab cluster delete --name <a cluster you do not use>   # kind clusters hold most; docker ps lists them"}
}

func disk(f Facts) Result {
	const check = "disk"
	switch {
	case f.DockerErr != nil:
		return notChecked(check, "free disk in Docker's data root")
	case f.FreeDisk < 0 && !f.Docker.OnThisHost:
		return Result{Check: check, Status: Unknown, Message: fmt.Sprintf("free disk: not measured, Docker's data root %s is on the engine's machine (a VM or DOCKER_HOST), not this one", f.Docker.DockerRootDir)}
	case f.FreeDisk < 0:
		return Result{Check: check, Status: Unknown, Message: fmt.Sprintf("free disk: could not measure Docker's data root %s", f.Docker.DockerRootDir)}
	}
	msg := fmt.Sprintf("%s disk free in Docker's data root %s; a lab cluster with %d node(s) needs %s (node and workload images, the nodes' volumes)",
		gib(f.FreeDisk), f.Docker.DockerRootDir, f.Workers+1, gib(hostenv.DiskNeeded(f.Workers)))
	if hostenv.CheckDisk(f.FreeDisk, f.Docker.DockerRootDir, f.Workers) == nil {
		return Result{Check: check, Status: OK, Message: msg}
	}
	return Result{Check: check, Status: Problem, Message: msg, Fix: "docker system prune   # removes stopped containers, unused networks and dangling images"}
}

func inotify(f Facts) Result {
	const check = "inotify"
	if f.DockerErr == nil && !f.Docker.OnThisHost {
		return Result{Check: check, Status: Unknown, Message: "inotify limits: not checked, the nodes run in another kernel (Docker's VM or DOCKER_HOST's machine)"}
	}
	if f.InotifyInstances < 0 || f.InotifyWatches < 0 {
		return Result{Check: check, Status: Unknown, Message: "inotify limits: not readable on " + f.HostOS}
	}
	running := max(f.RunningNodes, 0)
	holds := fmt.Sprintf("%d instances hold about %d kind nodes, %d running", f.InotifyInstances, f.InotifyInstances/hostenv.InotifyPerNode, running)
	var low, set []string
	for _, s := range []struct {
		name       string
		value, rec int
	}{
		{"fs.inotify.max_user_instances", f.InotifyInstances, hostenv.RecommendedInotifyInstances},
		{"fs.inotify.max_user_watches", f.InotifyWatches, hostenv.RecommendedInotifyWatches},
	} {
		if s.value < s.rec {
			low = append(low, fmt.Sprintf("%s is %d (kind recommends %d)", s.name, s.value, s.rec))
			set = append(set, fmt.Sprintf("%s=%d", s.name, s.rec))
		}
	}
	if len(low) == 0 {
		return Result{Check: check, Status: OK, Message: fmt.Sprintf("inotify: max_user_instances %d, max_user_watches %d, as kind recommends (%s)",
			f.InotifyInstances, f.InotifyWatches, holds)}
	}
	// The same budget `lab cluster create` checks: a cluster that would exhaust it never gets Ready.
	msg := strings.Join(low, ", ") + ": kind nodes fail with \"too many open files\" when they run out (" + holds + ")"
	if hostenv.CheckInotify(f.InotifyInstances, running, f.Workers+1) != nil {
		msg = strings.Join(low, ", ") + fmt.Sprintf(": too few for %d more node(s) (%s)", f.Workers+1, holds)
	}
	return Result{Check: check, Status: Problem, Message: msg, Fix: "sudo sysctl -w " + strings.Join(set, " ")}
}

func cgroup(f Facts) Result {
	const check = "cgroup"
	if f.DockerErr != nil {
		return notChecked(check, "cgroup version")
	}
	switch f.Docker.CgroupVersion {
	case "2":
		return Result{Check: check, Status: OK, Message: "cgroup v2"}
	case "1":
		return Result{Check: check, Status: Warning,
			Message: "cgroup v1: Kubernetes deprecates it and v1.35's kubelet refuses it by default; lab sets failCgroupV1: false so the nodes start",
			Fix:     "boot with systemd.unified_cgroup_hierarchy=1 on the kernel command line"}
	}
	return Result{Check: check, Status: Unknown, Message: fmt.Sprintf("cgroup version: Docker says %q", f.Docker.CgroupVersion)}
}

func platform(f Facts) Result {
	const check = "platform"
	if f.DockerErr != nil {
		return notChecked(check, "the nodes' platform")
	}
	nodes, self := f.Docker.Platform(), f.HostOS+"/"+f.HostArch
	switch {
	case f.Docker.OSType != "linux":
		return Result{Check: check, Status: Problem, Message: fmt.Sprintf("Docker runs %s containers; kind nodes are Linux containers", f.Docker.OSType),
			Fix: `& 'C:\Program Files\Docker\Docker\DockerCli.exe' -SwitchLinuxEngine`}
	case nodes == self:
		return Result{Check: check, Status: OK, Message: fmt.Sprintf("nodes run %s, as this lab build", nodes)}
	}
	// lab packs its own binary into the webhook and operator images, and the images check it is a static Linux
	// program of the nodes' architecture.
	msg := fmt.Sprintf("nodes run %s, this lab is a %s build: the scenarios that run lab inside the nodes (admission webhooks, the operator) need lab for %s",
		nodes, self, nodes)
	if f.HostOS != "linux" {
		return Result{Check: check, Status: Warning, Message: msg, Fix: "run lab on Linux (a VM, or WSL2) for those scenarios"}
	}
	return Result{Check: check, Status: Problem, Message: msg, Fix: fmt.Sprintf("GOARCH=%s make build   # in lab's source tree", strings.TrimPrefix(nodes, "linux/"))}
}

// minorSkew is kubectl's supported version skew: one minor version older or newer than the API server.
const minorSkew = 1

func kubectl(f Facts) Result {
	const check = "kubectl"
	k := f.Kubectl
	switch {
	case k.Path == "":
		return Result{Check: check, Status: Problem, Message: "kubectl not found on PATH", Fix: installKubectl(f)}
	case k.Err != nil:
		return Result{Check: check, Status: Unknown, Message: fmt.Sprintf("kubectl at %s: %v", k.Path, k.Err)}
	}
	have, okHave := minor(k.Version)
	want, okWant := minor(f.KubernetesVersion)
	if !okHave || !okWant {
		return Result{Check: check, Status: Unknown, Message: fmt.Sprintf("kubectl %s at %s; its skew against the node image %s is unknown", k.Version, k.Path, f.NodeImage)}
	}
	skew := have - want
	msg := fmt.Sprintf("kubectl %s at %s; the nodes run Kubernetes %s", k.Version, k.Path, f.KubernetesVersion)
	if skew >= -minorSkew && skew <= minorSkew {
		return Result{Check: check, Status: OK, Message: msg + " (within kubectl's ±1 minor version)"}
	}
	dir := "older"
	if skew > 0 {
		dir = "newer"
	}
	return Result{Check: check, Status: Problem,
		Message: fmt.Sprintf("%s: %d minor versions %s, kubectl supports ±1", msg, max(skew, -skew), dir), Fix: installKubectl(f)}
}

// installKubectl downloads the kubectl of the nodes' version, as kubernetes.io's install page does.
func installKubectl(f Facts) string {
	if f.KubernetesVersion == "" {
		return "install kubectl: https://kubernetes.io/docs/tasks/tools/"
	}
	url := fmt.Sprintf("https://dl.k8s.io/release/%s/bin/%s/%s/kubectl", f.KubernetesVersion, f.HostOS, f.HostArch)
	if f.HostOS == "windows" {
		return "curl.exe -fLo kubectl.exe " + url + ".exe   # then put it on PATH"
	}
	return "curl -fLo kubectl " + url + " && sudo install -m 0755 kubectl /usr/local/bin/kubectl"
}

var minorRE = regexp.MustCompile(`^v?(\d+)\.(\d+)`)

// minor turns v1.35.4 (or v1.32.4-dispatcher) into a number whose differences within a major version are
// minor versions.
func minor(v string) (int, bool) {
	m := minorRE.FindStringSubmatch(v)
	if m == nil {
		return 0, false
	}
	major, _ := strconv.Atoi(m[1])
	mnr, _ := strconv.Atoi(m[2])
	return major*1000 + mnr, true
}

func component(c Component) Result {
	check, what := c.Name, fmt.Sprintf("%s %s", c.Name, c.Version)
	build := fmt.Sprintf("make %s && export %s=$PWD/bin/%s-%s   # in lab's source tree", c.Name, c.Env, c.Name, c.Version)
	switch {
	case c.Err != nil:
		return Result{Check: check, Status: Problem, Message: fmt.Sprintf("%s: %v", what, c.Err), Fix: build}
	case c.Path != "":
		return Result{Check: check, Status: OK, Message: fmt.Sprintf("%s: %s", what, c.Path)}
	case c.Required:
		return Result{Check: check, Status: Warning,
			Message: fmt.Sprintf("%s: not found ($%s, a bundle, PATH); the scenarios that use it cannot start", what, c.Env), Fix: build}
	}
	return Result{Check: check, Status: OK, Message: fmt.Sprintf("%s: none given ($%s or a bundle); lab pulls its upstream image", what, c.Env)}
}

func gib(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
