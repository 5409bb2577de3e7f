// Package hostenv inspects the machine lab runs on: the Docker engine, the host conditions that decide how a
// kind node must be configured, free memory and disk, and the kernel's inotify limits. Every failure is a
// one-line error that says what to do.
package hostenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cka-lab/lab/internal/docker"
)

// Docker describes the Docker engine kind will use.
type Docker struct {
	ServerVersion string
	// CgroupVersion is the engine's, not lab's: on Docker Desktop or WSL2 the engine runs in another kernel.
	CgroupVersion string
	MemTotal      int64
	ID            string
	NCPU          int
	// OSType and Architecture are the nodes' platform (Architecture as the kernel names it: x86_64, aarch64).
	OSType, Architecture string
	OperatingSystem      string
	// DockerRootDir holds the images and the nodes' volumes; its free space is only this host's to measure
	// when OnThisHost.
	DockerRootDir string
	// OnThisHost: the engine answers with this machine's host name, so it shares this kernel and disks; one in
	// Docker Desktop's VM or behind a remote DOCKER_HOST does not.
	OnThisHost bool
}

// Errors a caller may test for; their text is what the learner reads.
var (
	ErrDockerNotInstalled = errors.New("docker is not installed: install Docker Engine (Debian: `sudo apt-get install docker.io`) and try again")
	ErrDockerNotRunning   = errors.New("the Docker daemon is not running: start it (`sudo systemctl start docker`, or `sudo dockerd &`) and try again")
	ErrDockerPermission   = errors.New("permission denied on the Docker socket: add yourself to the docker group (`sudo usermod -aG docker $USER`, then log in again) or run lab with sudo")
)

// infoTimeout bounds `docker info`: a daemon that does not answer it in this time is not usable.
const infoTimeout = 20 * time.Second

// CheckDocker proves the docker CLI is installed and its daemon answers, and reads what lab needs from it.
func CheckDocker(ctx context.Context) (Docker, error) {
	if _, err := docker.Path(); err != nil {
		return Docker{}, ErrDockerNotInstalled
	}
	out, err := docker.Output(ctx, infoTimeout, "info", "--format", "{{json .}}")
	// Docker's fields are named as docker info names them; Name and ServerErrors are read here only.
	var info struct {
		Docker
		Name         string
		ServerErrors []string
	}
	// docker info prints the client half as JSON even when the daemon is unreachable, with the reason in
	// ServerErrors (or on stderr, depending on the CLI version), so classify whatever text came back.
	jsonErr := json.Unmarshal(firstJSONLine(out), &info)
	if err != nil || jsonErr != nil || len(info.ServerErrors) > 0 || info.ServerVersion == "" {
		if docker.TimedOut(err) {
			return Docker{}, fmt.Errorf("the Docker daemon did not answer within %s: check `docker info` and try again", infoTimeout)
		}
		return Docker{}, ClassifyDockerError(string(out) + " " + docker.Stderr(err) + " " + strings.Join(info.ServerErrors, " "))
	}
	host, _ := os.Hostname()
	d := info.Docker
	d.OnThisHost = info.Name != "" && info.Name == host
	return d, nil
}

// ClassifyDockerError maps what the docker CLI printed to one of lab's errors.
func ClassifyDockerError(output string) error {
	o := strings.ToLower(output)
	switch {
	case strings.Contains(o, "permission denied"):
		return ErrDockerPermission
	case strings.Contains(o, "cannot connect to the docker daemon"),
		strings.Contains(o, "is the docker daemon running"),
		strings.Contains(o, "no such file or directory"),
		strings.Contains(o, "connection refused"):
		return ErrDockerNotRunning
	}
	line := strings.TrimSpace(strings.SplitN(strings.TrimSpace(output), "\n", 2)[0])
	return fmt.Errorf("docker is not usable (%s): check `docker info` and try again", line)
}

func firstJSONLine(out []byte) []byte {
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "{") {
			return []byte(l)
		}
	}
	return []byte("{}")
}

// Platform is the nodes' platform in Go's terms (linux/amd64): lab runs its own binary, and copies helm and
// etcdutl, into nodes of this platform.
func (d Docker) Platform() string {
	arch := d.Architecture
	switch arch {
	case "x86_64":
		arch = "amd64"
	case "aarch64":
		arch = "arm64"
	}
	return d.OSType + "/" + arch
}
