package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/bundle"
	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/cluster/images"
)

// bundleImageJSON is one image of `lab bundle save|load -o json`.
type bundleImageJSON struct {
	Ref string `json:"ref"`
	ID  string `json:"id"`
}

type bundleJSON struct {
	File   string            `json:"file"`
	Bytes  int64             `json:"bytes"`
	Lab    string            `json:"lab"`
	Images []bundleImageJSON `json:"images"`
}

func newBundleCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "bundle",
		Short: "Carry every image lab needs to machines without a registry (workshop rooms, air-gapped labs)",
		Long: `bundle save writes the kind node image and every workload image the scenarios use into one archive,
with a manifest of image IDs and a SHA-256 for every file; bundle load checks every checksum, then loads the
images into the local Docker. After that, lab cluster create and every scenario work without a registry.`,
		Example: `  lab bundle save lab-images.tar          # on a machine with the images (or internet)
  lab bundle load /media/usb/lab-images.tar`,
	}
	c.AddCommand(newBundleSaveCmd(f), newBundleLoadCmd(f))
	return c
}

type bundleSaveOptions struct {
	out  outputFlags
	path string
	refs []string
}

func newBundleSaveCmd(f *Factory) *cobra.Command {
	o := &bundleSaveOptions{}
	c := &cobra.Command{
		Use:   "save FILE",
		Short: "Write the node image and every catalogue image into FILE (pulling only missing ones)",
		Example: `  lab bundle save lab-images.tar
  LAB_NODE_IMAGE=kindest/node:v1.35.4 lab bundle save lab-images.tar -o json`,
		Args: cobra.ExactArgs(1),
		RunE: runE(f, o),
	}
	o.out.addFlags(c)
	return c
}

// complete lists what goes in: the small workload images first, so a load restores them before the long
// node image.
func (o *bundleSaveOptions) complete(f *Factory, _ *cobra.Command, args []string) error {
	o.path = args[0]
	cat, err := f.Catalog()
	if err != nil {
		return err
	}
	o.refs = append(cat.Images(), cluster.NodeImage())
	return nil
}

func (o *bundleSaveOptions) validate() error {
	if info, err := os.Stat(filepath.Dir(o.path)); err != nil || !info.IsDir() {
		return fmt.Errorf("cannot write %s: its directory does not exist", o.path)
	}
	return o.out.validate()
}

func (o *bundleSaveOptions) run(ctx context.Context, f *Factory) error {
	st := f.Status()
	if err := st.Step(fmt.Sprintf("Ensuring %d image(s) in the local Docker", len(o.refs)), func() error {
		return images.EnsureAllLocal(ctx, o.refs)
	}); err != nil {
		return err
	}
	m, size, err := bundle.SaveFile(o.path, func(w *bundle.Writer) error {
		for i, ref := range o.refs {
			if err := st.Step(fmt.Sprintf("Saving %s (%d/%d)", ref, i+1, len(o.refs)), func() error { return w.Add(ctx, bundle.CLI{}, ref) }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	js := bundleJSON{File: o.path, Bytes: size, Lab: m.Lab}
	for _, img := range m.Images {
		js.Images = append(js.Images, bundleImageJSON{Ref: img.Ref, ID: img.ID})
	}
	return o.out.print(f.Out, js, func() error {
		fmt.Fprintf(f.Out, "Wrote %s: %d image(s), %.1f GB. On each machine: lab bundle load %s\n", o.path, len(m.Images), float64(size)/1e9, filepath.Base(o.path))
		return nil
	})
}

type bundleLoadOptions struct {
	out  outputFlags
	path string
	size int64
}

func newBundleLoadCmd(f *Factory) *cobra.Command {
	o := &bundleLoadOptions{}
	c := &cobra.Command{
		Use:   "load FILE",
		Short: "Check every checksum of a bundle, then load its images into the local Docker",
		Example: `  lab bundle load lab-images.tar
  lab bundle load lab-images.tar && lab cluster create`,
		Args: cobra.ExactArgs(1),
		RunE: runE(f, o),
	}
	o.out.addFlags(c)
	return c
}

func (o *bundleLoadOptions) complete(_ *Factory, _ *cobra.Command, args []string) error {
	o.path = args[0]
	info, err := os.Stat(o.path)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", o.path, errors.Unwrap(err))
	}
	o.size = info.Size()
	return nil
}

func (o *bundleLoadOptions) validate() error { return o.out.validate() }

func (o *bundleLoadOptions) run(ctx context.Context, f *Factory) error {
	st := f.Status()
	var m *bundle.Manifest
	if err := st.Step("Verifying the checksums of "+o.path, func() error {
		var err error
		m, err = bundle.VerifyFile(o.path)
		return err
	}); err != nil {
		return fmt.Errorf("bundle %s is refused, nothing was loaded: %w (copy it again)", o.path, err)
	}
	ids, err := bundle.Load(ctx, o.path, m, bundle.CLI{}, func(img bundle.Image, load func() error) error {
		return st.Step("Loading "+img.Ref, load)
	})
	if err != nil {
		return err
	}
	js := bundleJSON{File: o.path, Bytes: o.size, Lab: m.Lab}
	for _, img := range m.Images {
		js.Images = append(js.Images, bundleImageJSON{Ref: img.Ref, ID: ids[img.Ref]})
		if ids[img.Ref] != img.ID {
			// Docker's containerd image store and its classic one name the same image differently.
			fmt.Fprintf(f.ErrOut, "warning: %s loaded as %s; the bundle recorded %s (another Docker image store?)\n", img.Ref, ids[img.Ref], img.ID)
		}
	}
	return o.out.print(f.Out, js, func() error {
		for _, img := range js.Images {
			fmt.Fprintf(f.Out, "  %s  %s\n", img.Ref, img.ID)
		}
		fmt.Fprintf(f.Out, "Loaded %d image(s): lab cluster create and every scenario now work without a registry.\n", len(js.Images))
		return nil
	})
}
