package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeDocker keeps images as the archives `docker save` would write: a few files, a directory and a symlink.
type fakeDocker struct {
	saved    map[string][]byte
	ids      map[string]string
	loaded   map[string][]entry
	failSave bool
	failLoad bool
}

type entry struct {
	name, link, body string
	kind             byte
}

func newFakeDocker(refs ...string) *fakeDocker {
	d := &fakeDocker{saved: map[string][]byte{}, ids: map[string]string{}, loaded: map[string][]entry{}}
	for i, ref := range refs {
		d.ids[ref] = fmt.Sprintf("sha256:%064d", i+1)
		d.saved[ref] = archive([]entry{
			{name: "blobs/", kind: tar.TypeDir},
			{name: "blobs/sha256/", kind: tar.TypeDir},
			{name: "blobs/sha256/layer", kind: tar.TypeReg, body: strings.Repeat("layer of "+ref+" ", 1000)},
			{name: "blobs/sha256/config", kind: tar.TypeReg, body: `{"config":"` + ref + `"}`},
			{name: "layer.tar", kind: tar.TypeSymlink, link: "blobs/sha256/layer"},
			{name: "repositories", kind: tar.TypeReg, body: ref},
		})
	}
	return d
}

func archive(es []entry) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range es {
		h := &tar.Header{Name: e.name, Typeflag: e.kind, Linkname: e.link, Mode: 0o644, Size: int64(len(e.body))}
		if e.kind != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			panic(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			panic(err)
		}
	}
	if err := tw.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func (d *fakeDocker) ImageID(_ context.Context, ref string) string { return d.ids[ref] }

func (d *fakeDocker) Save(_ context.Context, ref string) (io.ReadCloser, error) {
	if d.failSave {
		return io.NopCloser(strings.NewReader("not a tar")), nil
	}
	return io.NopCloser(bytes.NewReader(d.saved[ref])), nil
}

// Load reads the archive like docker: the image is known by the reference in its repositories file.
func (d *fakeDocker) Load(_ context.Context, r io.Reader) error {
	if d.failLoad {
		return errors.New("no space left on device")
	}
	tr := tar.NewReader(r)
	var es []entry
	ref := ""
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if h.Name == "repositories" {
			ref = string(body)
		}
		es = append(es, entry{name: h.Name, link: h.Linkname, body: string(body), kind: h.Typeflag})
	}
	d.loaded[ref], d.ids[ref] = es, fmt.Sprintf("sha256:loaded-%s", ref)
	return nil
}

var refs = []string{"kindest/node:v1.35.4", "nginx:1.27", "busybox:1.36"}

// writeBundle writes refs from d and a program for each of tools, whose content is toolBody.
func writeBundle(t *testing.T, d Docker, tools ...string) (string, *Manifest) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "lab.bundle")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	w := NewWriter(f, "v-test")
	for _, ref := range refs {
		if err := w.Add(context.Background(), d, ref); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range tools {
		src := filepath.Join(dir, name)
		if err := os.WriteFile(src, []byte(toolBody(name)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := w.AddTool(name, src); err != nil {
			t.Fatal(err)
		}
	}
	m, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return path, m
}

func TestRoundTrip(t *testing.T) {
	src := newFakeDocker(refs...)
	path, written := writeBundle(t, src)
	m, err := VerifyFile(path)
	if err != nil {
		t.Fatalf("verify a fresh bundle: %v", err)
	}
	if m.Lab != "v-test" || len(m.Images) != 3 || m.Size() != written.Size() {
		t.Fatalf("manifest = %+v", m)
	}
	for i, img := range m.Images {
		if img.Ref != refs[i] || img.ID != src.ids[refs[i]] || len(img.Files) != 3 {
			t.Errorf("image %d = %+v", i, img)
		}
		for _, f := range img.Files {
			if !strings.HasPrefix(f.Name, img.Dir+"/") || len(f.SHA256) != 64 {
				t.Errorf("file %+v", f)
			}
		}
	}

	dst := newFakeDocker()
	var order []string
	ids, err := Load(context.Background(), path, m, dst, func(img Image, load func() error) error {
		order = append(order, img.Ref)
		return load()
	})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if strings.Join(order, ",") != strings.Join(refs, ",") {
		t.Errorf("loaded %v, want %v", order, refs)
	}
	for _, ref := range refs {
		want := newFakeDocker(ref)
		var wantEntries []entry
		tr := tar.NewReader(bytes.NewReader(want.saved[ref]))
		for h, err := tr.Next(); err == nil; h, err = tr.Next() {
			body, _ := io.ReadAll(tr)
			wantEntries = append(wantEntries, entry{name: h.Name, link: h.Linkname, body: string(body), kind: h.Typeflag})
		}
		if !slices.Equal(dst.loaded[ref], wantEntries) {
			t.Errorf("%s arrived as %v, want what docker saved: %v", ref, names(dst.loaded[ref]), names(wantEntries))
		}
		if ids[ref] != "sha256:loaded-"+ref {
			t.Errorf("id of %s after load = %q", ref, ids[ref])
		}
	}
}

func TestVerifyNamesTheCorruptedFile(t *testing.T) {
	path, m := writeBundle(t, newFakeDocker(refs...))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("layer of nginx:1.27"))
	corrupt := bytes.Clone(data)
	corrupt[i+3] ^= 0x20
	var ce *CorruptError
	_, err = Verify(bytes.NewReader(corrupt))
	if !errors.As(err, &ce) || ce.File != m.Images[1].Dir+"/blobs/sha256/layer" || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("flipped byte in nginx's layer: %v", err)
	}

	tampered := bytes.Replace(data, []byte(m.Images[2].Files[0].SHA256), []byte(strings.Repeat("0", 64)), 1)
	if _, err := Verify(bytes.NewReader(tampered)); !errors.As(err, &ce) || ce.File != ManifestName {
		t.Errorf("manifest edited without its checksum: %v", err)
	}

	if _, err := Verify(bytes.NewReader(data[:len(data)/2])); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("half a bundle: %v", err)
	}

	if _, err := Verify(bytes.NewReader(archive([]entry{{name: "etc/passwd", kind: tar.TypeReg, body: "x"}}))); !errors.As(err, &ce) || ce.File != "etc/passwd" {
		t.Errorf("a tar that is no bundle: %v", err)
	}

	if _, err := Verify(strings.NewReader("")); !errors.As(err, &ce) || ce.File != ManifestName {
		t.Errorf("an empty file: %v", err)
	}
}

func TestVerifyRefusesExtraAndMissingFiles(t *testing.T) {
	m := Manifest{Format: Format, Images: []Image{{Ref: "a", Dir: "images/0", Files: []File{{Name: "images/0/x", Size: 1, SHA256: sha("x")}}}}}
	extra := bundleOf(t, m, entry{name: "images/0/x", kind: tar.TypeReg, body: "x"}, entry{name: "images/0/y", kind: tar.TypeReg, body: "y"})
	var ce *CorruptError
	if _, err := Verify(bytes.NewReader(extra)); !errors.As(err, &ce) || ce.File != "images/0/y" || ce.Reason != "is not in the manifest" {
		t.Errorf("extra file: %v", err)
	}
	missing := bundleOf(t, m)
	if _, err := Verify(bytes.NewReader(missing)); !errors.As(err, &ce) || ce.File != "images/0/x" || ce.Reason != "is missing" {
		t.Errorf("missing file: %v", err)
	}
	for _, format := range []int{Format - 1, Format + 1} {
		m.Format = format
		if _, err := Verify(bytes.NewReader(bundleOf(t, m))); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("bundle format %d is not the format %d", format, Format)) {
			t.Errorf("format %d: %v", format, err)
		}
	}
}

func TestSaveAndLoadFailuresAreReported(t *testing.T) {
	d := newFakeDocker("nginx:1.27")
	w := NewWriter(io.Discard, "v")
	if err := w.Add(context.Background(), d, "busybox:1.36"); err == nil || !strings.Contains(err.Error(), "busybox:1.36 is not in the local Docker") {
		t.Errorf("absent image: %v", err)
	}
	d.failSave = true
	if err := w.Add(context.Background(), d, "nginx:1.27"); err == nil || !strings.Contains(err.Error(), "read docker save of nginx:1.27") {
		t.Errorf("broken save: %v", err)
	}

	path, m := writeBundle(t, newFakeDocker(refs...))
	dst := newFakeDocker()
	dst.failLoad = true
	_, err := Load(context.Background(), path, m, dst, func(_ Image, load func() error) error { return load() })
	if err == nil || !strings.Contains(err.Error(), "load kindest/node:v1.35.4: no space left on device") {
		t.Errorf("docker load failing: %v", err)
	}
}

// bundleOf writes image entries and a manifest with a correct checksum.
func bundleOf(t *testing.T, m Manifest, es ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	w := NewWriter(&b, "v")
	w.m = m
	for _, e := range es {
		h := &tar.Header{Name: e.name, Typeflag: e.kind, Mode: 0o644, Size: int64(len(e.body))}
		if err := w.tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := w.tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func names(es []entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%s(%c,%d)", e.name, e.kind, len(e.body)))
	}
	return out
}

func TestSaveFileLeavesABundleOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lab.bundle")
	d := newFakeDocker(refs...)
	fill := func(refs []string) func(*Writer) error {
		return func(w *Writer) error {
			for _, ref := range refs {
				if err := w.Add(context.Background(), d, ref); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if _, _, err := SaveFile(path, fill(append(refs, "absent:1"))); err == nil {
		t.Fatal("a save with an absent image succeeded")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("a failed save left %v", left)
	}
	m, size, err := SaveFile(path, fill(refs))
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Size() != size || len(m.Images) != len(refs) {
		t.Fatalf("saved %v (%d bytes, %d images): %v", info, size, len(m.Images), err)
	}
	if _, err := VerifyFile(path); err != nil {
		t.Errorf("the saved bundle does not verify: %v", err)
	}
}

func toolBody(name string) string { return "#!/bin/sh\necho " + name + "\n" }

// Tools travel after the images: a load still restores every image, and the programs arrive executable.
func TestToolsRoundTrip(t *testing.T) {
	path, written := writeBundle(t, newFakeDocker(refs...), "helm", "traefik")
	m, err := VerifyFile(path)
	if err != nil {
		t.Fatalf("verify a bundle with tools: %v", err)
	}
	if len(m.Tools) != 2 || m.Tools[0].Name != "helm" || m.Tools[0].File != written.Tools[0].File || m.Tools[1].File.Name != "tools/traefik" {
		t.Fatalf("tools = %+v", m.Tools)
	}
	dst := newFakeDocker()
	if _, err := Load(context.Background(), path, m, dst, func(_ Image, load func() error) error { return load() }); err != nil {
		t.Fatalf("load images before tools: %v", err)
	}
	if len(dst.loaded) != len(refs) {
		t.Errorf("loaded %d images, want %d", len(dst.loaded), len(refs))
	}

	dir := filepath.Join(t.TempDir(), "state", "tools")
	for range 2 { // a second load replaces what the first wrote
		paths, err := ExtractTools(path, m, dir)
		if err != nil {
			t.Fatalf("extract: %v", err)
		}
		if want := []string{filepath.Join(dir, "helm"), filepath.Join(dir, "traefik")}; !slices.Equal(paths, want) {
			t.Fatalf("extracted to %v, want %v", paths, want)
		}
		for i, p := range paths {
			body, err := os.ReadFile(p)
			if err != nil || string(body) != toolBody(m.Tools[i].Name) {
				t.Errorf("%s holds %q (%v)", p, body, err)
			}
			if info, err := os.Stat(p); err != nil || info.Mode().Perm() != 0o755 {
				t.Errorf("%s: %v %v, want mode 0755", p, info.Mode(), err)
			}
		}
		if left, _ := os.ReadDir(dir); len(left) != 2 {
			t.Errorf("the tools directory holds %v, want the two tools alone", left)
		}
	}
}

func TestVerifyRefusesChangedAndExtraTools(t *testing.T) {
	path, _ := writeBundle(t, newFakeDocker(refs...), "helm")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	changed := bytes.Clone(data)
	changed[bytes.Index(data, []byte("echo helm"))] ^= 0x20
	if _, err := Verify(bytes.NewReader(changed)); !errors.As(err, &ce) || ce.File != "tools/helm" || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("flipped byte in helm: %v", err)
	}

	m := Manifest{Format: Format, Tools: []Tool{{Name: "helm", File: File{Name: "tools/helm", Size: 1, SHA256: sha("h")}}}}
	helm := entry{name: "tools/helm", kind: tar.TypeReg, body: "h"}
	extra := bundleOf(t, m, helm, entry{name: "tools/kubectl", kind: tar.TypeReg, body: "k"})
	if _, err := Verify(bytes.NewReader(extra)); !errors.As(err, &ce) || ce.File != "tools/kubectl" || ce.Reason != "is not in the manifest" {
		t.Errorf("extra tool: %v", err)
	}
	if _, err := Verify(bytes.NewReader(bundleOf(t, m))); !errors.As(err, &ce) || ce.File != "tools/helm" || ce.Reason != "is missing" {
		t.Errorf("missing tool: %v", err)
	}
	link := bundleOf(t, m, helm, entry{name: "tools/kubectl", kind: tar.TypeSymlink, link: "/usr/bin/kubectl"})
	if _, err := Verify(bytes.NewReader(link)); !errors.As(err, &ce) || ce.File != "tools/kubectl" || ce.Reason != "is not a regular file" {
		t.Errorf("a link among the tools: %v", err)
	}
	m.Tools[0].Name = "../helm"
	if _, err := Verify(bytes.NewReader(bundleOf(t, m, helm))); !errors.As(err, &ce) || ce.File != ManifestName {
		t.Errorf("a tool named out of its directory: %v", err)
	}
}

// A bundle changed after it was verified leaves no program behind.
func TestExtractToolsChecksAgain(t *testing.T) {
	path, m := writeBundle(t, newFakeDocker(refs...), "helm")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[bytes.Index(data, []byte("echo helm"))] ^= 0x20
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var ce *CorruptError
	if _, err := ExtractTools(path, m, dir); !errors.As(err, &ce) || ce.File != "tools/helm" {
		t.Errorf("extract a changed helm: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a refused extract left %v", left)
	}
}

func TestWriterRefusesImagesAfterToolsAndBadToolNames(t *testing.T) {
	w := NewWriter(io.Discard, "v")
	if err := w.AddTool("../helm", os.Args[0]); err == nil {
		t.Error("a tool named out of its directory was added")
	}
	if err := w.AddTool("helm", t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory as a tool: %v", err)
	}
	if err := w.AddTool("lab", os.Args[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(context.Background(), newFakeDocker(refs...), refs[0]); err == nil || !strings.Contains(err.Error(), "images go before tools") {
		t.Errorf("an image after a tool: %v", err)
	}
}
