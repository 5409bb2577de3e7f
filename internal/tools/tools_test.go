package tools

import (
	"errors"
	"os"
	"path/filepath"
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

// program writes an executable named name into dir and returns its path.
func program(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Helm is $LAB_HELM, else the one a bundle brought, else helm on PATH.
func TestHelmLookupOrder(t *testing.T) {
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	t.Setenv(HelmEnv, "")
	t.Setenv("PATH", t.TempDir())
	if _, err := Helm(); !errors.Is(err, ErrNoHelm) {
		t.Errorf("no helm anywhere gave %v, want ErrNoHelm", err)
	}
	onPath := program(t, os.Getenv("PATH"), "helm")
	if p, err := Helm(); err != nil || p != onPath {
		t.Errorf("Helm() = %q, %v; want the one on PATH, %s", p, err, onPath)
	}
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	bundled := program(t, dir, "helm")
	if p, err := Helm(); err != nil || p != bundled {
		t.Errorf("Helm() = %q, %v; want the one a bundle brought, %s", p, err, bundled)
	}
	t.Setenv(HelmEnv, "/nonexistent/helm")
	if _, err := Helm(); err == nil || !strings.Contains(err.Error(), HelmEnv) {
		t.Errorf("a missing %s binary gave %v, want an error naming %s", HelmEnv, err, HelmEnv)
	}
	t.Setenv(HelmEnv, os.Args[0])
	if p, err := Helm(); err != nil || p != os.Args[0] {
		t.Errorf("Helm() = %q, %v; want %s", p, err, os.Args[0])
	}
}

// A component is its variable's program, else the one a bundle brought, else "" (the upstream image).
func TestComponentLookupOrder(t *testing.T) {
	for _, c := range []struct {
		name, env string
		find      func() (string, error)
	}{{MetricsServerName, MetricsServerEnv, MetricsServer}, {TraefikName, TraefikEnv, Traefik}} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("LAB_STATE_DIR", t.TempDir())
			t.Setenv(c.env, "")
			if p, err := c.find(); err != nil || p != "" {
				t.Errorf("with no program: %q, %v; want \"\" (the upstream image)", p, err)
			}
			dir, err := Dir()
			if err != nil {
				t.Fatal(err)
			}
			bundled := program(t, dir, c.name)
			if p, err := c.find(); err != nil || p != bundled {
				t.Errorf("got %q, %v; want the one a bundle brought, %s", p, err, bundled)
			}
			t.Setenv(c.env, os.Args[0])
			if p, err := c.find(); err != nil || p != os.Args[0] {
				t.Errorf("got %q, %v; want %s's, %s", p, err, c.env, os.Args[0])
			}
			t.Setenv(c.env, "/nonexistent/"+c.name)
			if _, err := c.find(); err == nil || !strings.Contains(err.Error(), "make "+c.name) {
				t.Errorf("a missing %s binary gave %v, want one saying how to build it", c.env, err)
			}
		})
	}
}

// Locate finds each component where its scenarios do, and says "" without an error when it is nowhere.
func TestLocate(t *testing.T) {
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	for _, c := range Components() {
		t.Setenv(c.Env, "")
		if p, err := c.Locate(); p != "" || err != nil {
			t.Errorf("%s nowhere: %q, %v", c.Name, p, err)
		}
	}
	helm := program(t, os.Getenv("PATH"), HelmName)
	program(t, os.Getenv("PATH"), TraefikName)
	for _, c := range Components() {
		p, err := c.Locate()
		switch {
		case err != nil:
			t.Errorf("%s: %v", c.Name, err)
		case c.Name == HelmName && p != helm:
			t.Errorf("helm on PATH: got %q", p)
		case c.Name == TraefikName && p != "":
			t.Errorf("a traefik on PATH is not lab's (it packs one it was given): got %q", p)
		}
	}
}
