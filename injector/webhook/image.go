package webhook

import (
	"io"

	"github.com/cka-lab/lab/internal/cluster/images"
)

// ImageRepository is the repository of the image of lab's own binary (the webhook's and the operator's). The
// .local domain can never be pulled, matching imagePullPolicy Never in the Deployment.
const ImageRepository = "lab.local/lab"

// imageUser is the conventional "nonroot" uid, so runAsNonRoot can verify it.
const imageUser = "65532"

// ImageTag returns a tag derived from the binary's content, so a node loads the image once per build and a
// rebuilt lab never runs a stale webhook.
func ImageTag(binaryPath string) (string, error) {
	return images.BinaryTag(ImageRepository, binaryPath)
}

// Image is the image of lab's binary imageRef names: the binary alone at /lab, serving the webhook unless a
// Pod's args say otherwise.
func Image(binaryPath, imageRef string) images.Binary {
	return images.Binary{
		Path: binaryPath, File: "lab", Ref: imageRef,
		Entrypoint: []string{"/lab"}, Cmd: []string{"webhook", "serve"}, User: imageUser,
		What: "webhook image", Rebuild: "build lab with GOOS=linux CGO_ENABLED=0 (make build)",
	}
}

// BuildImage writes to w a docker-loadable tarball of the image of lab's binary.
func BuildImage(binaryPath, imageRef string, w io.Writer) error {
	return Image(binaryPath, imageRef).Build(w)
}
