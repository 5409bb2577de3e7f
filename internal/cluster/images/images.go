// Package images makes the images a lab cluster needs available: present in the local Docker (pulled only when
// missing and a registry answers) and loaded into every kind node, so Pods never pull what lab preloaded.
package images

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/cka-lab/lab/internal/docker"
)

// PullTimeout bounds a pull attempt: a registry that does not answer in this time is treated as unreachable.
var PullTimeout = 5 * time.Minute

// LocalID returns the image's ID in the local Docker, or "" when it is not there.
func LocalID(ctx context.Context, ref string) string {
	out, err := docker.Output(ctx, docker.Quick, "image", "inspect", "--format", "{{.Id}}", ref)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// MissingError says an image is neither local nor pullable, and how to provide it.
type MissingError struct {
	Ref      string
	PullErr  string
	Provider string // how to get it, depends on the image (node image or workload image)
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("image %s is not in the local Docker and could not be pulled (%s): %s", e.Ref, e.PullErr, e.Provider)
}

// HowToProvide is the advice for a missing image.
const HowToProvide = "pull it on a machine with internet and `docker load` it here (or run `lab bundle load`); offline, build it with ../shared/kind-offline/up.sh"

// EnsureLocal makes ref present in the local Docker, pulling only when it is missing. It never pulls an
// image that is already there, so preloaded and offline-built images are used as they are.
func EnsureLocal(ctx context.Context, ref string) error {
	if LocalID(ctx, ref) != "" {
		return nil
	}
	err := docker.Run(ctx, PullTimeout, "pull", "--quiet", ref)
	if err == nil {
		return nil
	}
	reason := firstLine(docker.Stderr(err))
	if docker.TimedOut(err) {
		reason = "no registry answered within " + PullTimeout.String()
	}
	return &MissingError{Ref: ref, PullErr: reason, Provider: HowToProvide}
}

// EnsureAllLocal runs EnsureLocal on every ref and returns every failure, so one run names all missing images.
func EnsureAllLocal(ctx context.Context, refs []string) error {
	var errs []error
	for _, r := range refs {
		if err := EnsureLocal(ctx, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// LoadIntoNodes loads refs from the local Docker into every node that lacks them (or has another build under
// the same name). Images the same nodes need are saved into one archive, imported into those nodes
// concurrently: a fresh cluster gets one `docker save` and one import per node.
func LoadIntoNodes(ctx context.Context, ns []nodes.Node, refs []string) error {
	ids := map[string]string{}
	for _, ref := range refs {
		if ids[ref] = LocalID(ctx, ref); ids[ref] == "" {
			return &MissingError{Ref: ref, PullErr: "not present", Provider: HowToProvide}
		}
	}
	// One exec per image and node, each a round trip into a node: asked all at once.
	has := make([][]bool, len(refs))
	var wg sync.WaitGroup
	for i, ref := range refs {
		has[i] = make([]bool, len(ns))
		for j, n := range ns {
			wg.Go(func() {
				got, err := nodeutils.ImageID(n, ref)
				has[i][j] = err == nil && got == ids[ref]
			})
		}
	}
	wg.Wait()
	groups := map[string][]string{}
	members := map[string][]nodes.Node{}
	var order []string
	for i, ref := range refs {
		var need []nodes.Node
		var key []string
		for j, n := range ns {
			if !has[i][j] {
				need = append(need, n)
				key = append(key, n.String())
			}
		}
		if len(need) == 0 {
			continue
		}
		k := strings.Join(key, ",")
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], ref)
		members[k] = need
	}
	for _, k := range order {
		path, release, err := archive(ctx, groups[k], ids)
		if err != nil {
			return err
		}
		err = LoadArchiveFile(ctx, members[k], path, strings.Join(groups[k], ", "))
		release()
		if err != nil {
			return err
		}
	}
	return nil
}

// LoadArchiveFile imports an image archive (docker save or OCI tarball) into the nodes concurrently.
func LoadArchiveFile(ctx context.Context, ns []nodes.Node, path, what string) error {
	g, _ := errgroup.WithContext(ctx)
	for _, n := range ns {
		g.Go(func() error {
			if err := importArchive(n, path); err != nil {
				return fmt.Errorf("load %s into node %s: %w", what, n, err)
			}
			return nil
		})
	}
	return g.Wait()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
