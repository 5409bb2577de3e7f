// Package doctor says whether this machine can run lab clusters: Gather inspects Docker, free memory and
// disk, the kernel's limits, kubectl and the pinned components, and Judge decides each check from those facts
// alone, naming for every problem the one command that fixes it.
package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/cluster/hostenv"
	"github.com/cka-lab/lab/internal/tools"
)

// Facts are what Gather found on this machine; Judge decides from them alone, so tests give it any machine.
type Facts struct {
	// HostOS and HostArch are lab's own build (runtime.GOOS, runtime.GOARCH).
	HostOS, HostArch string
	Docker           hostenv.Docker
	// DockerErr is hostenv.CheckDocker's error; nil when the engine answered.
	DockerErr error
	// DockerHost is $DOCKER_HOST, which points the docker CLI at another engine than the default socket.
	DockerHost string
	// Podman: podman is on PATH, which lab's kind provider (Docker) does not drive.
	Podman bool
	// FreeMemory (this host's MemAvailable) and FreeDisk (in Docker's data root) are -1 when unknown.
	FreeMemory, FreeDisk int64
	// Kernel settings: -1 when unknown.
	InotifyInstances, InotifyWatches int
	// RunningNodes counts every kind cluster's running node containers; -1 when unknown.
	RunningNodes int
	// NodeImage is the kind node image lab creates clusters from, KubernetesVersion what its tag names.
	NodeImage, KubernetesVersion string
	Kubectl                      Kubectl
	Components                   []Component
	// Workers is the size of the cluster the resources are judged for, as `lab cluster create --workers`.
	Workers int
}

// Kubectl is the kubectl on PATH: Path "" when there is none, Err when it did not say its version.
type Kubectl struct {
	Path, Version string
	Err           error
}

// Component is a pinned component and where lab finds it (Path "" when nowhere).
type Component struct {
	tools.Component
	Path string
	Err  error
}

// kubectlTimeout bounds `kubectl version --client`, which reads nothing from a cluster.
const kubectlTimeout = 10 * time.Second

// Gather inspects this machine for a cluster of the given workers. It changes nothing and needs no cluster;
// what it cannot learn is left unknown for Judge to say so.
func Gather(ctx context.Context, workers int) Facts {
	f := Facts{
		HostOS: runtime.GOOS, HostArch: runtime.GOARCH, DockerHost: os.Getenv("DOCKER_HOST"),
		FreeMemory: hostenv.AvailableMemory(), FreeDisk: -1, RunningNodes: -1,
		InotifyInstances: hostenv.InotifyInstances(), InotifyWatches: hostenv.InotifyWatches(),
		NodeImage: cluster.NodeImage(), Workers: workers,
	}
	f.KubernetesVersion = cluster.KubernetesVersion(f.NodeImage)
	_, err := exec.LookPath("podman")
	f.Podman = err == nil
	if f.Docker, f.DockerErr = hostenv.CheckDocker(ctx); f.DockerErr == nil {
		f.FreeDisk = hostenv.FreeDisk(f.Docker)
		if n, err := cluster.RunningKindNodes(ctx); err == nil {
			f.RunningNodes = n
		}
	}
	f.Kubectl = gatherKubectl(ctx)
	for _, c := range tools.Components() {
		p, err := c.Locate()
		f.Components = append(f.Components, Component{Component: c, Path: p, Err: err})
	}
	return f
}

func gatherKubectl(ctx context.Context) Kubectl {
	p, err := exec.LookPath("kubectl")
	if err != nil {
		return Kubectl{}
	}
	ctx, cancel := context.WithTimeout(ctx, kubectlTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "version", "--client", "-o", "json").Output()
	if err != nil {
		return Kubectl{Path: p, Err: fmt.Errorf("kubectl version --client: %w", err)}
	}
	var v struct {
		ClientVersion struct{ GitVersion string } `json:"clientVersion"`
	}
	if err := json.Unmarshal(out, &v); err != nil || v.ClientVersion.GitVersion == "" {
		return Kubectl{Path: p, Err: errors.New("kubectl version --client -o json named no version")}
	}
	return Kubectl{Path: p, Version: v.ClientVersion.GitVersion}
}
