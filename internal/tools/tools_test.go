package tools

import (
	"os"
	"strings"
	"testing"
)

// The Makefile builds the Helm the scenarios are written for, and the error message names it.
func TestMakefileBuildsHelmVersion(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "HELM_VERSION := "+HelmVersion+"\n") {
		t.Errorf("the Makefile's HELM_VERSION is not %s (internal/tools.HelmVersion)", HelmVersion)
	}
	if !strings.Contains(string(mk), "ETCDUTL_VERSION := "+EtcdutlVersion+"\n") {
		t.Errorf("the Makefile's ETCDUTL_VERSION is not %s (internal/tools.EtcdutlVersion)", EtcdutlVersion)
	}
	if !strings.Contains(string(mk), "TRAEFIK_VERSION := "+TraefikVersion+"\n") {
		t.Errorf("the Makefile's TRAEFIK_VERSION is not %s (internal/tools.TraefikVersion)", TraefikVersion)
	}
	if !strings.Contains(string(mk), "METRICS_SERVER_VERSION := "+MetricsServerVersion+"\n") {
		t.Errorf("the Makefile's METRICS_SERVER_VERSION is not %s (internal/tools.MetricsServerVersion)", MetricsServerVersion)
	}
}

func TestHelmFromEnvironment(t *testing.T) {
	t.Setenv(HelmEnv, "/nonexistent/helm")
	if _, err := Helm(); err == nil || !strings.Contains(err.Error(), HelmEnv) {
		t.Errorf("a missing %s binary gave %v, want an error naming %s", HelmEnv, err, HelmEnv)
	}
	t.Setenv(HelmEnv, os.Args[0])
	if p, err := Helm(); err != nil || p != os.Args[0] {
		t.Errorf("Helm() = %q, %v; want %s", p, err, os.Args[0])
	}
}
