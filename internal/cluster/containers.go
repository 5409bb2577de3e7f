package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cka-lab/lab/internal/docker"
	"github.com/cka-lab/lab/internal/kube"
)

// nodeContainers lists the cluster's node containers with their Docker state ("running", "exited", ...).
func nodeContainers(ctx context.Context, name string) (map[string]string, error) {
	out, err := docker.Output(ctx, docker.Quick, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name,
		"--format", "{{.Names}} {{.State}}")
	if err != nil {
		return nil, fmt.Errorf("list node containers of %s: %w", name, err)
	}
	states := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			states[f[0]] = f[1]
		}
	}
	return states, nil
}

// stoppedNodes lists the cluster's node containers that are not running: after a Docker restart, kind's
// nodes (restart policy on-failure) stay stopped, and every API call would time out without saying why.
func stoppedNodes(ctx context.Context, name string) ([]string, error) {
	states, err := nodeContainers(ctx, name)
	if err != nil {
		return nil, err
	}
	return notRunning(states), nil
}

// notRunning lists, sorted, the node containers whose state is not running.
func notRunning(states map[string]string) []string {
	var stopped []string
	for n, st := range states {
		if st != "running" {
			stopped = append(stopped, n)
		}
	}
	sort.Strings(stopped)
	return stopped
}

// runningNodes lists the cluster's running node containers.
func runningNodes(ctx context.Context, name string) ([]string, error) {
	states, err := nodeContainers(ctx, name)
	if err != nil {
		return nil, err
	}
	var running []string
	for n, st := range states {
		if st == "running" {
			running = append(running, n)
		}
	}
	sort.Strings(running)
	return running, nil
}

// startNodes starts stopped node containers and waits until containerd answers in each: kind's entrypoint brings
// systemd, containerd and the kubelet back, and the static Pods follow, but images loaded before containerd is
// up fail ("cannot access socket /run/containerd/containerd.sock", seen in a clean e2e run).
func startNodes(ctx context.Context, containers []string) error {
	if err := docker.Run(ctx, docker.Lifecycle, append([]string{"start"}, containers...)...); err != nil {
		return err
	}
	for _, c := range containers {
		var last string
		err := kube.Poll(ctx, 250*time.Millisecond, time.Minute, func(ctx context.Context) (bool, error) {
			_, err := docker.Output(ctx, docker.Quick, "exec", c, "ctr", "--namespace", "k8s.io", "version")
			if err != nil {
				last = err.Error()
			}
			return err == nil, nil
		})
		if err != nil {
			return fmt.Errorf("containerd in restarted node %s: %s: %w", c, last, err)
		}
	}
	return nil
}

// StopNode stops a node container the way `docker stop` does, after thawing cgroups left frozen in it, and
// thaws and tries again when Docker could not kill a process (see frozen.go).
func StopNode(ctx context.Context, container string) error {
	var err error
	for attempt := 1; attempt <= deleteAttempts; attempt++ {
		_, _ = ThawNode(ctx, container)
		if err = docker.Run(ctx, docker.Lifecycle, "stop", container); err == nil {
			return nil
		}
		if !killFailed(err) {
			return err
		}
	}
	return err
}

// settleTimeout bounds the wait for a thawed node to show whether it lives on or exits.
const settleTimeout = 30 * time.Second

// settleThawed waits until each thawed node either answers an exec or has exited. A node whose earlier stop
// failed on a frozen cgroup has lost its init already: once thawed, its last processes die and the container
// exits a moment later. Seen here: a recovery that listed the stopped nodes at once found none, and its
// image load then failed on a node that had exited meanwhile.
func settleThawed(ctx context.Context, nodes []string) {
	for _, n := range nodes {
		_ = kube.Poll(ctx, 250*time.Millisecond, settleTimeout, func(ctx context.Context) (bool, error) {
			out, err := docker.Output(ctx, docker.Quick, "inspect", "--format", "{{.State.Running}}", n)
			if err != nil || strings.TrimSpace(string(out)) != "true" {
				return true, nil
			}
			return docker.Run(ctx, docker.Quick, "exec", n, "true") == nil, nil
		})
	}
}

// RunningKindNodes counts the running node containers of every kind cluster on the engine, lab's or not: all
// of them draw on the same kernel's inotify budget.
func RunningKindNodes(ctx context.Context) (int, error) {
	out, err := docker.Output(ctx, docker.Quick, "ps", "-q", "--filter", "label=io.x-k8s.kind.cluster")
	if err != nil {
		return 0, fmt.Errorf("list kind node containers: %w", err)
	}
	return len(strings.Fields(string(out))), nil
}
