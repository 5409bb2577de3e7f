// Package hostenv inspects the machine lab runs on: the Docker engine, the host conditions that decide how a
// kind node must be configured, and free memory. Every failure is a one-line error that says what to do.
package hostenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	var info struct {
		ServerVersion string
		CgroupVersion string
		MemTotal      int64
		ID            string
		ServerErrors  []string
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
	return Docker{ServerVersion: info.ServerVersion, CgroupVersion: info.CgroupVersion, MemTotal: info.MemTotal, ID: info.ID}, nil
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
