package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
)

// Binary is an image that holds one static program and nothing else: lab's own binary (the webhook, the
// operator) or a component built from its Go module (metrics-server). Nothing is pulled or pushed, so it
// works without any registry.
type Binary struct {
	// Path is the program on this machine; File its path inside the image ("lab", no leading slash).
	Path, File string
	// Ref is the image reference; BinaryTag gives one from the program's content.
	Ref             string
	Entrypoint, Cmd []string
	User            string
	// What names the image in errors, and Rebuild says how to get a static program.
	What, Rebuild string
}

// elfArch maps ELF machines to OCI architectures; kind nodes only exist for these two.
var elfArch = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_AARCH64: "arm64",
}

// BinaryTag returns repository:tag with a tag derived from the program's content, so a node loads the image
// once per build and a rebuilt program never runs stale.
func BinaryTag(repository, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("image tag: %w", err)
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("image tag: hash %s: %w", path, err)
	}
	return repository + ":" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// Build writes to w a docker-loadable tarball of the image.
func (b Binary) Build(w io.Writer) error {
	tag, err := name.NewTag(b.Ref)
	if err != nil {
		return fmt.Errorf("%s: invalid reference %q: %w", b.What, b.Ref, err)
	}
	arch, err := b.staticArch()
	if err != nil {
		return err
	}
	bin, err := os.ReadFile(b.Path)
	if err != nil {
		return fmt.Errorf("%s: %w", b.What, err)
	}
	layerTar, err := tarFile(b.File, bin)
	if err != nil {
		return fmt.Errorf("%s: layer: %w", b.What, err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithCompressionLevel(gzip.BestSpeed), tarball.WithCompressedCaching)
	if err != nil {
		return fmt.Errorf("%s: layer: %w", b.What, err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return fmt.Errorf("%s: append layer: %w", b.What, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("%s: config: %w", b.What, err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Config = v1.Config{Entrypoint: b.Entrypoint, Cmd: b.Cmd, User: b.User}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return fmt.Errorf("%s: config: %w", b.What, err)
	}
	if err := tarball.Write(tag, img, w); err != nil {
		return fmt.Errorf("%s: write %s: %w", b.What, tag, err)
	}
	return nil
}

// staticArch returns the program's architecture after checking it can run in an image with no libc and no
// dynamic loader.
func (b Binary) staticArch() (string, error) {
	f, err := elf.Open(b.Path)
	if err != nil {
		return "", fmt.Errorf("%s: %s is not a Linux executable (%s): %w", b.What, b.Path, b.Rebuild, err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("%s: %s is dynamically linked; it runs in an empty image, so %s", b.What, b.Path, b.Rebuild)
		}
	}
	arch, ok := elfArch[f.Machine]
	if !ok {
		return "", fmt.Errorf("%s: %s is built for %s; kind nodes need amd64 or arm64", b.What, b.Path, f.Machine)
	}
	return arch, nil
}

// tarFile returns a tar archive holding one root-owned executable. Fixed metadata keeps the layer digest a
// function of the program alone.
func tarFile(path string, content []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     path,
		Mode:     0o755,
		Size:     int64(len(content)),
		ModTime:  time.Unix(0, 0),
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("tar header: %w", err)
	}
	if _, err := tw.Write(content); err != nil {
		return nil, fmt.Errorf("tar content: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("tar close: %w", err)
	}
	return buf.Bytes(), nil
}

// EnsureBinary loads the image into every node that lacks it, building it once.
func EnsureBinary(ctx context.Context, ns []nodes.Node, b Binary) error {
	var need []nodes.Node
	for _, n := range ns {
		if id, err := nodeutils.ImageID(n, b.Ref); err != nil || id == "" {
			need = append(need, n)
		}
	}
	if len(need) == 0 {
		return nil
	}
	f, err := os.CreateTemp("", "lab-image-*.tar")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	defer func() { _ = f.Close() }()
	if err := b.Build(f); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return LoadArchiveFile(ctx, need, f.Name(), b.Ref)
}
