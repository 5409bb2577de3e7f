// Package tools finds the programs some scenarios bring into the cluster, which a kind node image lacks: Helm
// and etcdutl, as an exam host has them installed, and metrics-server and Traefik, on a machine without a
// registry. Each is taken from its environment variable, else from Dir, where `lab bundle load` puts the ones a
// bundle brought.
package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/cka-lab/lab/internal/state"
)

// Names of the programs: the make targets that build them, and their file names in a bundle and in Dir.
const (
	HelmName          = "helm"
	EtcdutlName       = "etcdutl"
	MetricsServerName = "metrics-server"
	TraefikName       = "traefik"
)

// Dir is where `lab bundle load` puts the programs a bundle brought: tools/ in lab's state directory.
func Dir() (string, error) {
	d, err := state.Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "tools"), nil
}

// HelmEnv names the helm binary to use instead of the one a bundle brought or the one on PATH.
const HelmEnv = "LAB_HELM"

// HelmVersion is the Helm release `make helm` builds from the Go module proxy, and the one the scenarios are
// written for.
const HelmVersion = "v4.3.2"

// ErrNoHelm says this machine has no helm, and the ways to get one.
var ErrNoHelm = fmt.Errorf("this scenario needs Helm: install it (https://helm.sh/docs/intro/install/), build %s with `make helm` and set %s=$PWD/bin/helm-%s, or `lab bundle load` a bundle that carries it", HelmVersion, HelmEnv, HelmVersion)

// Helm returns the path of the helm binary on this machine: $LAB_HELM, else the one a bundle brought, else
// helm on PATH.
func Helm() (string, error) { return onHost(HelmEnv, HelmName, ErrNoHelm) }

// EtcdutlEnv names the etcdutl binary to use instead of the one a bundle brought or the one on PATH.
const EtcdutlEnv = "LAB_ETCDUTL"

// EtcdutlVersion is the etcdutl release `make etcdutl` builds from the Go module proxy: the version of the etcd
// that kind's node image runs, whose image has etcdctl but not etcdutl, which restores a snapshot.
const EtcdutlVersion = "v3.6.6"

// ErrNoEtcdutl says this machine has no etcdutl, and the ways to get one.
var ErrNoEtcdutl = fmt.Errorf("this scenario needs etcdutl %s: build it with `make etcdutl` and set %s=$PWD/bin/etcdutl-%s, or `lab bundle load` a bundle that carries it", EtcdutlVersion, EtcdutlEnv, EtcdutlVersion)

// Etcdutl returns the path of the etcdutl binary on this machine: $LAB_ETCDUTL, else the one a bundle brought,
// else etcdutl on PATH.
func Etcdutl() (string, error) { return onHost(EtcdutlEnv, EtcdutlName, ErrNoEtcdutl) }

// onHost returns a program an exam host has installed: the one the variable env names, else the one a bundle
// brought, else name on PATH, else missing.
func onHost(env, name string, missing error) (string, error) {
	p, err := find(env, name)
	if p != "" || err != nil {
		return p, err
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", missing
}

// MetricsServerEnv names a static metrics-server binary that lab packs into an image, for machines without a
// registry to pull the upstream image from; it comes before the one a bundle brought.
const MetricsServerEnv = "LAB_METRICS_SERVER"

// MetricsServerVersion is the metrics-server release `make metrics-server` builds from the Go module proxy, and
// the upstream image lab pulls otherwise.
const MetricsServerVersion = "v0.8.0"

// MetricsServer returns the path $LAB_METRICS_SERVER names, else the one a bundle brought, or "" when there is
// neither (lab then pulls the upstream image).
func MetricsServer() (string, error) { return find(MetricsServerEnv, MetricsServerName) }

// TraefikEnv names a static Traefik binary that lab packs into an image, for machines without a registry; it
// comes before the one a bundle brought.
const TraefikEnv = "LAB_TRAEFIK"

// TraefikVersion is the Traefik release `make traefik` builds from the Go module proxy (hack/build-traefik.sh),
// and the upstream image lab pulls otherwise.
const TraefikVersion = "v3.7.13"

// Traefik returns the path $LAB_TRAEFIK names, else the one a bundle brought, or "" when there is neither (lab
// then pulls the upstream image).
func Traefik() (string, error) { return find(TraefikEnv, TraefikName) }

// find returns the program the variable env names, else Dir/name, or "" when there is neither.
func find(env, name string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s names no %s binary (build it with `make %s`): %w", env, name, name, err)
		}
		return p, nil
	}
	dir, err := Dir()
	if err != nil {
		return "", fmt.Errorf("look for the %s a bundle brought: %w", name, err)
	}
	p := filepath.Join(dir, name)
	switch _, err := os.Stat(p); {
	case err == nil:
		return p, nil
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	default:
		return "", fmt.Errorf("the %s a bundle brought: %w", name, err)
	}
}

// Component is a program lab pins, as `lab version` and `lab doctor` list them.
type Component struct {
	Name, Version, Env string
	// Required: the scenarios that use it cannot start without it. Without the others, lab pulls their
	// upstream image.
	Required bool
}

// Components are the pinned programs, in the README's order.
func Components() []Component {
	return []Component{
		{Name: HelmName, Version: HelmVersion, Env: HelmEnv, Required: true},
		{Name: EtcdutlName, Version: EtcdutlVersion, Env: EtcdutlEnv, Required: true},
		{Name: MetricsServerName, Version: MetricsServerVersion, Env: MetricsServerEnv},
		{Name: TraefikName, Version: TraefikVersion, Env: TraefikEnv},
	}
}

// Locate returns where lab finds the component on this machine, as the scenarios do, or "" when nowhere.
func (c Component) Locate() (string, error) {
	if c.Required {
		return onHost(c.Env, c.Name, nil)
	}
	return find(c.Env, c.Name)
}
