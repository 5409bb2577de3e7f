package commands

import (
	"context"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/bench"
	"github.com/cka-lab/lab/scenarios"
)

type benchOptions struct {
	bench.Options
	out outputFlags
	cat *scenarios.Catalog
}

func newBenchCmd(f *Factory) *cobra.Command {
	o := &benchOptions{}
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure lab on real clusters: cold create vs kind, start/check/reset per scenario, memory, capacity",
		Long: `bench creates its own clusters (lab-bench-*, in a private state directory), measures each quantity
several times and prints medians with min and max; it deletes every cluster it made. It takes a while
(cold creates and a capacity run); it is run by ` + "`make bench`" + `, not by the tests.`,
		Example: `  lab bench
  lab bench --runs 5 --scenarios taint-dedicated-node,rbac-deployer-create --capacity=false -o json
  lab bench --cold=false --capacity=false --lab /tmp/lab-main --scenarios bad-image-tag`,
		Args: cobra.NoArgs,
		RunE: runE(f, o),
	}
	c.Flags().IntVar(&o.Runs, "runs", 3, "runs of each measurement (medians are reported)")
	c.Flags().StringSliceVar(&o.Scenarios, "scenarios", nil, "scenarios to measure (default: all)")
	c.Flags().BoolVar(&o.Cold, "cold", true, "also time cold creates against plain kind")
	c.Flags().BoolVar(&o.Capacity, "capacity", true, "also count how many 2-node clusters the machine holds")
	c.Flags().IntVar(&o.MaxClusters, "max-clusters", 10, "stop the capacity run at this many clusters")
	c.Flags().StringVar(&o.NodeImage, "image", "", "kind node image (default $LAB_NODE_IMAGE or the pinned one)")
	c.Flags().StringVar(&o.Name, "name", "lab-bench", "name of the warm cluster the scenarios run on")
	c.Flags().StringVar(&o.Self, "lab", "", "lab binary to measure, to compare commits (default: this one)")
	o.out.addFlags(c)
	return c
}

// complete measures every scenario unless told which, with this very binary unless told another.
func (o *benchOptions) complete(f *Factory, _ *cobra.Command, _ []string) error {
	var err error
	if o.cat, err = f.Catalog(); err != nil {
		return err
	}
	if len(o.Scenarios) == 0 {
		o.Scenarios = o.cat.IDs()
	}
	if o.Self == "" {
		if o.Self, err = os.Executable(); err != nil {
			return err
		}
	}
	o.Self, err = filepath.Abs(o.Self)
	return err
}

func (o *benchOptions) validate() error {
	for _, id := range o.Scenarios {
		if _, err := o.cat.Get(id); err != nil {
			return err
		}
	}
	return o.out.validate()
}

func (o *benchOptions) run(ctx context.Context, f *Factory) error {
	b, err := bench.New(o.Options, f.Status())
	if err != nil {
		return err
	}
	r, err := b.Run(ctx, o.cat)
	if err != nil {
		return err
	}
	return o.out.print(f.Out, r, func() error {
		r.Print(f.Out)
		return nil
	})
}
