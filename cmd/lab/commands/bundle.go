package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/injector/addons"
	"github.com/cka-lab/lab/internal/bundle"
	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/cluster/images"
	"github.com/cka-lab/lab/internal/tools"
	"github.com/cka-lab/lab/internal/ui"
)

// bundleImageJSON is one image of `lab bundle save|load -o json`.
type bundleImageJSON struct {
	Ref string `json:"ref"`
	ID  string `json:"id"`
}

// bundleToolJSON is one program of `lab bundle save|load -o json`; Path is where a load put it.
type bundleToolJSON struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Path   string `json:"path,omitempty"`
}

type bundleJSON struct {
	File   string            `json:"file"`
	Bytes  int64             `json:"bytes"`
	Lab    string            `json:"lab"`
	Images []bundleImageJSON `json:"images"`
	Tools  []bundleToolJSON  `json:"tools"`
}

// newBundleJSON describes the bundle at file and its tools, at paths after a load; tools is [] rather than null
// when there are none, for scripts.
func newBundleJSON(file string, size int64, m *bundle.Manifest, paths []string) bundleJSON {
	js := bundleJSON{File: file, Bytes: size, Lab: m.Lab, Tools: []bundleToolJSON{}}
	for i, t := range m.Tools {
		tj := bundleToolJSON{Name: t.Name, SHA256: t.File.SHA256}
		if paths != nil {
			tj.Path = paths[i]
		}
		js.Tools = append(js.Tools, tj)
	}
	return js
}

// bundlePrograms are the programs a bundle carries when this machine has them (find); a component that lab
// can also run from its upstream image has that image carried instead; a program an exam host has installed
// and this machine lacks (missing) is only noted, for a warning.
var bundlePrograms = []struct {
	name     string
	find     func() (string, error)
	upstream string
	missing  error
	env      string
}{
	{tools.HelmName, tools.Helm, "", tools.ErrNoHelm, tools.HelmEnv},
	{tools.EtcdutlName, tools.Etcdutl, "", tools.ErrNoEtcdutl, tools.EtcdutlEnv},
	{tools.MetricsServerName, tools.MetricsServer, addons.MetricsServerImage, nil, ""},
	{tools.TraefikName, tools.Traefik, addons.TraefikImage, nil, ""},
}

func newBundleCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "bundle",
		Short: "Carry every image and program lab needs to machines without a registry (workshop rooms, air-gapped labs)",
		Long: `bundle save writes the kind node image, every workload image the scenarios use and the programs
some scenarios bring into the cluster (helm, etcdutl, metrics-server, traefik, as lab finds them here; for
the last two the upstream image otherwise) into one archive, with a manifest and a SHA-256 for every file.
bundle load checks every checksum, then loads the images into the local Docker and puts the programs into
lab's state directory, where lab looks for them after LAB_HELM, LAB_ETCDUTL, LAB_METRICS_SERVER and
LAB_TRAEFIK. After that, lab cluster create and every scenario work without a registry. The programs run
inside the nodes: like the images, they must be Linux builds for the classroom machines' architecture.`,
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
	// tools are the programs found here, by name; missing are the warnings for those that are not.
	tools   []bundleTool
	missing []string
}

// bundleTool is a program to carry: its name in the bundle and its path here.
type bundleTool struct{ name, path string }

func newBundleSaveCmd(f *Factory) *cobra.Command {
	o := &bundleSaveOptions{}
	c := &cobra.Command{
		Use:   "save FILE",
		Short: "Write the node image, every catalogue image and the component programs into FILE (pulling only missing images)",
		Example: `  lab bundle save lab-images.tar
  LAB_NODE_IMAGE=kindest/node:v1.35.4 lab bundle save lab-images.tar -o json`,
		Args: cobra.ExactArgs(1),
		RunE: runE(f, o),
	}
	o.out.addFlags(c)
	return c
}

// complete lists what goes in: the small workload images first, so a load restores them before the long
// node image, and each program this machine has, else its upstream image.
func (o *bundleSaveOptions) complete(f *Factory, _ *cobra.Command, args []string) error {
	o.path = args[0]
	cat, err := f.Catalog()
	if err != nil {
		return err
	}
	o.refs = cat.Images()
	for _, p := range bundlePrograms {
		path, err := p.find()
		switch {
		case p.missing != nil && errors.Is(err, p.missing):
			o.missing = append(o.missing, fmt.Sprintf("warning: no %s here to carry, so the scenarios that need it will need one on each machine: build it with `make %s` and set %s before saving, or install it on each machine", p.name, p.name, p.env))
		case err != nil:
			return err
		case path != "":
			o.tools = append(o.tools, bundleTool{p.name, path})
		default:
			o.refs = append(o.refs, p.upstream)
		}
	}
	o.refs = append(o.refs, cluster.NodeImage())
	return nil
}

func (o *bundleSaveOptions) validate() error {
	if info, err := os.Stat(filepath.Dir(o.path)); err != nil || !info.IsDir() {
		return fmt.Errorf("cannot write %s: its directory does not exist", o.path)
	}
	return o.out.validate()
}

func (o *bundleSaveOptions) run(ctx context.Context, f *Factory) error {
	for _, w := range o.missing {
		fmt.Fprintln(f.ErrOut, w)
	}
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
		for _, t := range o.tools {
			if err := st.Step(fmt.Sprintf("Adding tool %s (%s)", t.name, t.path), func() error { return w.AddTool(t.name, t.path) }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	js := newBundleJSON(o.path, size, m, nil)
	for _, img := range m.Images {
		js.Images = append(js.Images, bundleImageJSON{Ref: img.Ref, ID: img.ID})
	}
	return o.out.print(f.Out, js, func() error {
		fmt.Fprintf(f.Out, "Wrote %s: %d image(s) and %d tool(s), %.1f GB. On each machine: lab bundle load %s\n", o.path, len(m.Images), len(m.Tools), float64(size)/1e9, filepath.Base(o.path))
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
		Short: "Check every checksum of a bundle, then load its images into the local Docker and its programs for lab",
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

// extractTools puts the bundle's programs into tools.Dir, where lab looks for them, and returns their paths.
func (o *bundleLoadOptions) extractTools(st *ui.Status, m *bundle.Manifest) ([]string, error) {
	if len(m.Tools) == 0 {
		return nil, nil
	}
	dir, err := tools.Dir()
	if err != nil {
		return nil, err
	}
	var paths []string
	err = st.Step(fmt.Sprintf("Putting %d tool(s) into %s", len(m.Tools), dir), func() error {
		paths, err = bundle.ExtractTools(o.path, m, dir)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bundle %s: the images are loaded, its programs are not: %w", o.path, err)
	}
	return paths, nil
}

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
	paths, err := o.extractTools(st, m)
	if err != nil {
		return err
	}
	js := newBundleJSON(o.path, o.size, m, paths)
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
		for _, t := range js.Tools {
			fmt.Fprintf(f.Out, "  %s  %s\n", t.Name, t.Path)
		}
		fmt.Fprintf(f.Out, "Loaded %d image(s) and %d tool(s): lab cluster create and every scenario now work without a registry.\n", len(js.Images), len(js.Tools))
		return nil
	})
}
