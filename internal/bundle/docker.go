package bundle

import (
	"context"
	"io"

	"github.com/cka-lab/lab/internal/cluster/images"
	"github.com/cka-lab/lab/internal/docker"
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
	return docker.Call{Timeout: docker.Transfer}.Stream(ctx, "save", ref)
}

// Load runs `docker load` with r as its input.
func (CLI) Load(ctx context.Context, r io.Reader) error {
	return docker.Call{Timeout: docker.Transfer, Stdin: r}.Run(ctx, "load", "--quiet")
}
