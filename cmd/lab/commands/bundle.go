package commands

import (
	"bufio"
	"context"
	"encoding/json"
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

func newBundleSaveCmd(f *Factory) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "save FILE",
		Short: "Write the node image and every catalogue image into FILE (pulling only missing ones)",
		Example: `  lab bundle save lab-images.tar
  LAB_NODE_IMAGE=kindest/node:v1.35.4 lab bundle save lab-images.tar -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(output); err != nil {
				return err
			}
			if info, err := os.Stat(filepath.Dir(args[0])); err != nil || !info.IsDir() {
				return fmt.Errorf("cannot write %s: its directory does not exist", args[0])
			}
			cat, err := f.Catalog()
			if err != nil {
				return err
			}
			// The small workload images go first, so a load restores them before the long node image.
			refs := append(cat.Images(), cluster.NodeImage())
			m, size, err := saveBundle(cmd.Context(), f, args[0], refs)
			if err != nil {
				return err
			}
			out := bundleJSON{File: args[0], Bytes: size, Lab: m.Lab}
			for _, img := range m.Images {
				out.Images = append(out.Images, bundleImageJSON{Ref: img.Ref, ID: img.ID})
			}
			if output == "json" {
				return json.NewEncoder(f.Out).Encode(out)
			}
			fmt.Fprintf(f.Out, "Wrote %s: %d image(s), %.1f GB. On each machine: lab bundle load %s\n", args[0], len(m.Images), float64(size)/1e9, filepath.Base(args[0]))
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return c
}

// saveBundle writes the bundle next to path first and renames it into place, so an interrupted save never
// leaves a file that looks like a bundle.
func saveBundle(ctx context.Context, f *Factory, path string, refs []string) (m *bundle.Manifest, size int64, err error) {
	st := f.Status()
	if err := st.Step(fmt.Sprintf("Ensuring %d image(s) in the local Docker", len(refs)), func() error {
		return images.EnsureAllLocal(ctx, refs)
	}); err != nil {
		return nil, 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".partial-*")
	if err != nil {
		return nil, 0, fmt.Errorf("write bundle: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	buf := bufio.NewWriterSize(tmp, 1<<20)
	w := bundle.NewWriter(buf, bundle.LabVersion())
	for i, ref := range refs {
		if err := st.Step(fmt.Sprintf("Saving %s (%d/%d)", ref, i+1, len(refs)), func() error {
			return w.Add(ctx, bundle.CLI{}, ref)
		}); err != nil {
			return nil, 0, err
		}
	}
	if m, err = w.Close(); err != nil {
		return nil, 0, err
	}
	if err := errors.Join(buf.Flush(), tmp.Sync(), tmp.Chmod(0o644)); err != nil {
		return nil, 0, fmt.Errorf("write bundle %s: %w", path, err)
	}
	info, err := tmp.Stat()
	if err != nil {
		return nil, 0, err
	}
	if err := tmp.Close(); err != nil {
		return nil, 0, fmt.Errorf("write bundle %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, 0, fmt.Errorf("write bundle %s: %w", path, err)
	}
	return m, info.Size(), nil
}

func newBundleLoadCmd(f *Factory) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "load FILE",
		Short: "Check every checksum of a bundle, then load its images into the local Docker",
		Example: `  lab bundle load lab-images.tar
  lab bundle load lab-images.tar && lab cluster create`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(output); err != nil {
				return err
			}
			path := args[0]
			info, err := os.Stat(path)
			if err != nil {
				return fmt.Errorf("bundle %s: %w", path, errors.Unwrap(err))
			}
			st := f.Status()
			var m *bundle.Manifest
			if err := st.Step("Verifying the checksums of "+path, func() error {
				m, err = bundle.VerifyFile(path)
				return err
			}); err != nil {
				return fmt.Errorf("bundle %s is refused, nothing was loaded: %w (copy it again)", path, err)
			}
			ids, err := bundle.Load(cmd.Context(), path, m, bundle.CLI{}, func(img bundle.Image, load func() error) error {
				return st.Step("Loading "+img.Ref, load)
			})
			if err != nil {
				return err
			}
			out := bundleJSON{File: path, Bytes: info.Size(), Lab: m.Lab}
			for _, img := range m.Images {
				out.Images = append(out.Images, bundleImageJSON{Ref: img.Ref, ID: ids[img.Ref]})
				if ids[img.Ref] != img.ID {
					// Docker's containerd image store and its classic one name the same image differently.
					fmt.Fprintf(f.ErrOut, "warning: %s loaded as %s; the bundle recorded %s (another Docker image store?)\n", img.Ref, ids[img.Ref], img.ID)
				}
			}
			if output == "json" {
				return json.NewEncoder(f.Out).Encode(out)
			}
			for _, img := range out.Images {
				fmt.Fprintf(f.Out, "  %s  %s\n", img.Ref, img.ID)
			}
			fmt.Fprintf(f.Out, "Loaded %d image(s): lab cluster create and every scenario now work without a registry.\n", len(out.Images))
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return c
}
