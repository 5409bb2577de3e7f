package cluster

import (
	"strings"
	"testing"
)

func TestPreflight(t *testing.T) {
	const gib = 1 << 30
	if err := preflight(8*gib, 50*gib, "/var/lib/docker", 512, 2, 1); err != nil {
		t.Errorf("a roomy machine: %v", err)
	}
	if err := preflight(-1, -1, "", -1, 0, 1); err != nil {
		t.Errorf("what is not known must not block: %v", err)
	}
	err := preflight(1*gib, 3*gib, "/var/lib/docker", 512, 0, 1)
	if err == nil {
		t.Fatal("1 GiB memory and 3 GiB disk must refuse a 2-node cluster")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 ||
		!strings.Contains(lines[0], "too little free memory: 1.0 GiB free, a lab cluster with 2 node(s) needs 1.7 GiB") ||
		!strings.Contains(lines[1], "too little free disk: 3.0 GiB free in Docker's data root /var/lib/docker, a lab cluster with 2 node(s) needs 4.0 GiB") {
		t.Errorf("want one line per shortfall with need and free, got:\n%v", err)
	}
}

func TestKubernetesVersion(t *testing.T) {
	for img, want := range map[string]string{
		"kindest/node:v1.35.4":                     "v1.35.4",
		"kindest/node:v1.35.4@sha256:0123abcd":     "v1.35.4",
		"localhost:5000/kindest/node:v1.34.0-rc.1": "v1.34.0-rc.1",
		"localhost:5000/kindest/node":              "",
		"my/node:latest":                           "",
	} {
		if got := KubernetesVersion(img); got != want {
			t.Errorf("KubernetesVersion(%q) = %q, want %q", img, got, want)
		}
	}
}
