package bundle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/cka-lab/lab/internal/cluster/images"
)

// Docker is the local image store a bundle is saved from and loaded into.
type Docker interface {
	// ImageID is the image's ID, "" when it is not there.
	ImageID(ctx context.Context, ref string) string
	// Save streams the image as `docker save` writes it; Close reports whether the save succeeded.
	Save(ctx context.Context, ref string) (io.ReadCloser, error)
	// Load reads a `docker save` archive into the store.
	Load(ctx context.Context, r io.Reader) error
}

// CLI is the Docker engine through the docker command.
type CLI struct{}

// ImageID asks `docker image inspect`.
func (CLI) ImageID(ctx context.Context, ref string) string { return images.LocalID(ctx, ref) }

// Save starts `docker save ref` and returns its output stream.
func (CLI) Save(ctx context.Context, ref string) (io.ReadCloser, error) {
	cmd := exec.CommandContext(ctx, "docker", "save", ref)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("docker save %s: %w", ref, err)
	}
	return &saveStream{ReadCloser: out, cmd: cmd, stderr: &stderr, ref: ref}, nil
}

type saveStream struct {
	io.ReadCloser
	cmd    *exec.Cmd
	stderr *strings.Builder
	ref    string
}

// Close waits for docker save; closing the pipe first stops a save whose reader gave up early.
func (s *saveStream) Close() error {
	closeErr := s.ReadCloser.Close()
	if err := s.cmd.Wait(); err != nil {
		return fmt.Errorf("docker save %s: %s: %w", s.ref, firstLine(s.stderr.String()), err)
	}
	if closeErr != nil && !errors.Is(closeErr, io.ErrClosedPipe) {
		return closeErr
	}
	return nil
}

// Load runs `docker load` with r as its input.
func (CLI) Load(ctx context.Context, r io.Reader) error {
	cmd := exec.CommandContext(ctx, "docker", "load", "--quiet")
	cmd.Stdin = r
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("docker load: %s: %w", firstLine(string(out)), err)
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
