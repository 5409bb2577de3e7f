package webhook

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// staticBinary builds a tiny Go program the way `make build` builds lab.
func staticBinary(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  "module tiny\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() { println(\"tiny\") }\n",
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "tiny")
	cmd := exec.CommandContext(t.Context(), goBin, "build", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

func buildImageFile(t *testing.T, binary, ref string) v1.Image {
	t.Helper()
	path := filepath.Join(t.TempDir(), "image.tar")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := BuildImage(binary, ref, f); err != nil {
		_ = f.Close()
		t.Fatalf("BuildImage: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatalf("read back %s: %v", ref, err)
	}
	return img
}

func TestBuildImage(t *testing.T) {
	binary := staticBinary(t)
	ref, err := ImageTag(binary)
	if err != nil {
		t.Fatal(err)
	}
	img := buildImageFile(t, binary, ref)

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{"/lab"}) || !slices.Equal(cf.Config.Cmd, []string{"webhook", "serve"}) || cf.Config.User != "65532" {
		t.Errorf("config entrypoint=%q cmd=%q user=%q", cf.Config.Entrypoint, cf.Config.Cmd, cf.Config.User)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
	}

	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d, %v; want exactly one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	if err != nil {
		t.Fatalf("layer has no entry: %v", err)
	}
	if hdr.Name != "lab" || hdr.Typeflag != tar.TypeReg || hdr.Mode != 0o755 || hdr.Uid != 0 || hdr.Gid != 0 {
		t.Errorf("layer entry %q type=%c mode=%o uid=%d gid=%d; want regular lab 0755 owned by 0:0",
			hdr.Name, hdr.Typeflag, hdr.Mode, hdr.Uid, hdr.Gid)
	}
	got, err := io.ReadAll(tr)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("/lab in the layer differs from the binary")
	}
	if _, err := tr.Next(); err != io.EOF {
		t.Errorf("layer has more than /lab: %v", err)
	}

	// The tag is content-derived, so the same binary must give the same image.
	again := buildImageFile(t, binary, ref)
	d1, err1 := img.Digest()
	d2, err2 := again.Digest()
	if err1 != nil || err2 != nil || d1 != d2 {
		t.Errorf("rebuilding gave digest %s (%v), first %s (%v)", d2, err2, d1, err1)
	}
}

func TestBuildImageRejectsDynamicBinary(t *testing.T) {
	const ls = "/bin/ls"
	f, err := elf.Open(ls)
	if err != nil {
		t.Skipf("no ELF %s: %v", ls, err)
	}
	dynamic := slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
	_ = f.Close()
	if !dynamic {
		t.Skipf("%s is statically linked here", ls)
	}
	err = BuildImage(ls, "lab.local/lab:test", io.Discard)
	want := fmt.Sprintf("webhook image: %s is dynamically linked; it runs in an empty image, so build lab with GOOS=linux CGO_ENABLED=0 (make build)", ls)
	if err == nil || err.Error() != want {
		t.Errorf("BuildImage(%s) = %v\nwant %s", ls, err, want)
	}
}

func TestBuildImageRejectsNonELFAndBadRef(t *testing.T) {
	script := filepath.Join(t.TempDir(), "lab")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := BuildImage(script, "lab.local/lab:test", io.Discard); err == nil || !strings.Contains(err.Error(), "is not a Linux executable") {
		t.Errorf("BuildImage(script) = %v, want a not-a-Linux-executable error", err)
	}
	if err := BuildImage(script, "Not A Ref", io.Discard); err == nil || !strings.Contains(err.Error(), "invalid reference") {
		t.Errorf("BuildImage(bad ref) = %v, want an invalid reference error", err)
	}
}

func TestImageTag(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte("build one"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("build two"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("build one"))
	tagA, err := ImageTag(a)
	if err != nil {
		t.Fatal(err)
	}
	if want := ImageRepository + ":" + hex.EncodeToString(sum[:])[:12]; tagA != want {
		t.Errorf("ImageTag = %q, want %q", tagA, want)
	}
	if _, err := name.NewTag(tagA, name.StrictValidation); err != nil {
		t.Errorf("ImageTag %q is not a valid tag: %v", tagA, err)
	}
	if tagB, err := ImageTag(b); err != nil || tagB == tagA {
		t.Errorf("different binaries share tag %q (%v)", tagB, err)
	}
	if _, err := ImageTag(filepath.Join(dir, "missing")); err == nil {
		t.Error("ImageTag of a missing file succeeded")
	}
}
