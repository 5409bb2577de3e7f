// Package tools finds the programs some scenarios bring into the cluster, which a kind node image lacks: Helm
// and etcdutl, as an exam host has them installed, and metrics-server and Traefik, on a machine without a
// registry.
package tools

import (
	"errors"
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
	return onHost(HelmEnv, "helm", fmt.Sprintf("this scenario needs Helm: install it (https://helm.sh/docs/intro/install/), or build %s with `make helm` and set %s=$PWD/bin/helm-%s", HelmVersion, HelmEnv, HelmVersion))
}

// onHost returns the program the variable env names, else name on PATH, else the error missing.
func onHost(env, name, missing string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s names no %s binary: %w", env, name, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", errors.New(missing)
}

// EtcdutlEnv names the etcdutl binary to use instead of the one on PATH.
const EtcdutlEnv = "LAB_ETCDUTL"

// EtcdutlVersion is the etcdutl release `make etcdutl` builds from the Go module proxy: the version of the etcd
// that kind's node image runs, whose image has etcdctl but not etcdutl, which restores a snapshot.
const EtcdutlVersion = "v3.6.6"

// Etcdutl returns the path of the etcdutl binary on this machine: $LAB_ETCDUTL, else etcdutl on PATH.
func Etcdutl() (string, error) {
	return onHost(EtcdutlEnv, "etcdutl", fmt.Sprintf("this scenario needs etcdutl %s: build it with `make etcdutl` and set %s=$PWD/bin/etcdutl-%s", EtcdutlVersion, EtcdutlEnv, EtcdutlVersion))
}

// MetricsServerEnv names a static metrics-server binary that lab packs into an image, for machines without a
// registry to pull the upstream image from.
const MetricsServerEnv = "LAB_METRICS_SERVER"

// MetricsServerVersion is the metrics-server release `make metrics-server` builds from the Go module proxy, and
// the upstream image lab pulls otherwise.
const MetricsServerVersion = "v0.8.0"

// MetricsServer returns the path $LAB_METRICS_SERVER names, or "" when it is unset (lab then pulls the
// upstream image).
func MetricsServer() (string, error) { return fromEnv(MetricsServerEnv, "metrics-server") }

// TraefikEnv names a static Traefik binary that lab packs into an image, for machines without a registry.
const TraefikEnv = "LAB_TRAEFIK"

// TraefikVersion is the Traefik release `make traefik` builds from the Go module proxy (hack/build-traefik.sh),
// and the upstream image lab pulls otherwise.
const TraefikVersion = "v3.7.13"

// Traefik returns the path $LAB_TRAEFIK names, or "" when it is unset (lab then pulls the upstream image).
func Traefik() (string, error) { return fromEnv(TraefikEnv, "traefik") }

// fromEnv returns the program the variable env names, or "" when it is unset; target is the make target that
// builds it.
func fromEnv(env, target string) (string, error) {
	p := os.Getenv(env)
	if p == "" {
		return "", nil
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s names no %s binary (build it with `make %s`): %w", env, target, target, err)
	}
	return p, nil
}
