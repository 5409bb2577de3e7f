package webhook

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
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
)

// ImageRepository is the repository of webhook images. The .local domain
// can never be pulled, matching imagePullPolicy Never in the Deployment.
const ImageRepository = "lab.local/lab-webhook"

// imageUser is the conventional "nonroot" uid, so runAsNonRoot can verify it.
const imageUser = "65532"

// elfArch maps ELF machines to OCI architectures; kind nodes only exist for
// these two.
var elfArch = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_AARCH64: "arm64",
}

// ImageTag returns a tag derived from the binary's content, so a node loads
// the image once per build and a rebuilt lab never runs a stale webhook.
func ImageTag(binaryPath string) (string, error) {
	f, err := os.Open(binaryPath)
	if err != nil {
		return "", fmt.Errorf("webhook image tag: %w", err)
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("webhook image tag: hash %s: %w", binaryPath, err)
	}
	return ImageRepository + ":" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// BuildImage writes to w a docker-loadable tarball of imageRef: an otherwise
// empty image holding only the binary at /lab. Nothing is pulled or pushed,
// so it works without any registry.
func BuildImage(binaryPath, imageRef string, w io.Writer) error {
	tag, err := name.NewTag(imageRef)
	if err != nil {
		return fmt.Errorf("webhook image: invalid reference %q: %w", imageRef, err)
	}
	arch, err := staticArch(binaryPath)
	if err != nil {
		return err
	}
	bin, err := os.ReadFile(binaryPath)
	if err != nil {
		return fmt.Errorf("webhook image: %w", err)
	}
	layerTar, err := tarFile("lab", bin)
	if err != nil {
		return fmt.Errorf("webhook image: layer: %w", err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithCompressionLevel(gzip.BestSpeed), tarball.WithCompressedCaching)
	if err != nil {
		return fmt.Errorf("webhook image: layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return fmt.Errorf("webhook image: append layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("webhook image: config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Config = v1.Config{
		Entrypoint: []string{"/lab"},
		Cmd:        []string{"webhook", "serve"},
		User:       imageUser,
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return fmt.Errorf("webhook image: config: %w", err)
	}
	if err := tarball.Write(tag, img, w); err != nil {
		return fmt.Errorf("webhook image: write %s: %w", tag, err)
	}
	return nil
}

// staticArch returns the binary's architecture after checking it can run in
// an image with no libc and no dynamic loader.
func staticArch(binaryPath string) (string, error) {
	f, err := elf.Open(binaryPath)
	if err != nil {
		return "", fmt.Errorf("webhook image: %s is not a Linux executable (build lab with GOOS=linux CGO_ENABLED=0): %w", binaryPath, err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("webhook image: %s is dynamically linked; the webhook runs in an empty image, so build lab with CGO_ENABLED=0 (make build)", binaryPath)
		}
	}
	arch, ok := elfArch[f.Machine]
	if !ok {
		return "", fmt.Errorf("webhook image: %s is built for %s; kind nodes need amd64 or arm64", binaryPath, f.Machine)
	}
	return arch, nil
}

// tarFile returns a tar archive holding one root-owned executable. Fixed
// metadata keeps the layer digest a function of the binary alone.
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
