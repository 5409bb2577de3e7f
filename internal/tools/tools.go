// Package tools finds the command-line tools some scenarios bring onto a node, which a kind node image lacks:
// Helm, as an exam host has it installed.
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
