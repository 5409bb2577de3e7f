// Package tools finds the programs some scenarios bring into the cluster, which a kind node image lacks: Helm,
// as an exam host has it installed, and metrics-server, on a machine without a registry.
package tools

import (
	"fmt"
	"os"
	"os/exec"
)

// HelmEnv names the helm binary to use instead of the one on PATH.
const HelmEnv = "LAB_HELM"

// HelmVersion is the Helm release `make helm` builds from the Go module proxy, and the one the scenarios are
// written for.
const HelmVersion = "v4.3.2"

// Helm returns the path of the helm binary on this machine: $LAB_HELM, else helm on PATH.
func Helm() (string, error) {
	if p := os.Getenv(HelmEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s names no helm binary: %w", HelmEnv, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("this scenario needs Helm: install it (https://helm.sh/docs/intro/install/), or build %s with `make helm` and set %s=$PWD/bin/helm-%s", HelmVersion, HelmEnv, HelmVersion)
}

// MetricsServerEnv names a static metrics-server binary that lab packs into an image, for machines without a
// registry to pull the upstream image from.
const MetricsServerEnv = "LAB_METRICS_SERVER"

// MetricsServerVersion is the metrics-server release `make metrics-server` builds from the Go module proxy, and
// the upstream image lab pulls otherwise.
const MetricsServerVersion = "v0.8.0"

// MetricsServer returns the path $LAB_METRICS_SERVER names, or "" when it is unset (lab then pulls the
// upstream image).
func MetricsServer() (string, error) {
	p := os.Getenv(MetricsServerEnv)
	if p == "" {
		return "", nil
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s names no metrics-server binary (build it with `make metrics-server`): %w", MetricsServerEnv, err)
	}
	return p, nil
}
