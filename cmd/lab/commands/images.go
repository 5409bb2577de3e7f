package commands

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/cluster/images"
)

func newImagesCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{Use: "images", Short: "Manage the workload images scenarios use"}
	c.AddCommand(&cobra.Command{
		Use:     "load",
		Short:   "Load every image the catalogue declares from the local Docker into each node (pulling only missing ones)",
		Example: "  lab images load",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cat, err := f.Catalog()
			if err != nil {
				return err
			}
			cl, err := f.Cluster(cmd.Context())
			if err != nil {
				return err
			}
			refs := cat.Images()
			st := f.Status()
			if err := st.Step(fmt.Sprintf("Ensuring %d image(s) in the local Docker", len(refs)), func() error {
				return images.EnsureAllLocal(cmd.Context(), refs)
			}); err != nil {
				return err
			}
			ns, err := cl.Nodes()
			if err != nil {
				return err
			}
			return st.Step(fmt.Sprintf("Loading %d image(s) into %d node(s)", len(refs), len(ns)), func() error {
				return images.LoadIntoNodes(cmd.Context(), ns, refs)
			})
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the images the catalogue declares",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cat, err := f.Catalog()
			if err != nil {
				return err
			}
			for _, r := range cat.Images() {
				fmt.Fprintln(f.Out, r)
			}
			return nil
		},
	})
	return c
}
