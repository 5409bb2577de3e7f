package commands

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/bench"
)

func newBenchCmd(f *Factory) *cobra.Command {
	o := bench.Options{}
	var output string
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(output); err != nil {
				return err
			}
			cat, err := f.Catalog()
			if err != nil {
				return err
			}
			if len(o.Scenarios) == 0 {
				o.Scenarios = cat.IDs()
			}
			for _, id := range o.Scenarios {
				if _, err := cat.Get(id); err != nil {
					return err
				}
			}
			if o.Self == "" {
				if o.Self, err = os.Executable(); err != nil {
					return err
				}
			}
			if o.Self, err = filepath.Abs(o.Self); err != nil {
				return err
			}
			if k, err := lookKubectl(); err == nil {
				o.KubectlDir = filepath.Dir(k)
			}
			b, err := bench.New(o, f.Status())
			if err != nil {
				return err
			}
			r, err := b.Run(cmd.Context(), cat)
			if err != nil {
				return err
			}
			if output == "json" {
				return json.NewEncoder(f.Out).Encode(r)
			}
			r.Print(f.Out)
			return nil
		},
	}
	c.Flags().IntVar(&o.Runs, "runs", 3, "runs of each measurement (medians are reported)")
	c.Flags().StringSliceVar(&o.Scenarios, "scenarios", nil, "scenarios to measure (default: all)")
	c.Flags().BoolVar(&o.Cold, "cold", true, "also time cold creates against plain kind")
	c.Flags().BoolVar(&o.Capacity, "capacity", true, "also count how many 2-node clusters the machine holds")
	c.Flags().IntVar(&o.MaxClusters, "max-clusters", 10, "stop the capacity run at this many clusters")
	c.Flags().StringVar(&o.NodeImage, "image", "", "kind node image (default $LAB_NODE_IMAGE or the pinned one)")
	c.Flags().StringVar(&o.Name, "name", "lab-bench", "name of the warm cluster the scenarios run on")
	c.Flags().StringVar(&o.Self, "lab", "", "lab binary to measure, to compare commits (default: this one)")
	c.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return c
}

// lookKubectl finds kubectl for the reference solutions the bench applies.
func lookKubectl() (string, error) {
	if k := os.Getenv("KUBECTL"); k != "" {
		return k, nil
	}
	if k, err := exec.LookPath("kubectl"); err == nil {
		return k, nil
	}
	matches, _ := filepath.Glob("/var/cache/kind-offline/out/k8s-*/kubectl")
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	return "", fmt.Errorf("kubectl not found: put it on PATH or set KUBECTL")
}
