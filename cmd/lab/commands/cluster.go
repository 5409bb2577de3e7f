package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	kindcmd "sigs.k8s.io/kind/pkg/cmd"
	kindlog "sigs.k8s.io/kind/pkg/log"

	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/kindconfigs"
)

func kindLogger() kindlog.Logger { return kindcmd.NewLogger() }

func newClusterCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "cluster",
		Short: "Create, inspect and delete the lab's kind cluster",
	}
	c.AddCommand(newClusterCreateCmd(f), newClusterDeleteCmd(f), newClusterStatusCmd(f))
	return c
}

type clusterCreateOptions struct {
	workers int
	image   string
	merge   bool
	wait    time.Duration
	images  []string
}

func newClusterCreateCmd(f *Factory) *cobra.Command {
	o := &clusterCreateOptions{}
	c := &cobra.Command{
		Use:   "create",
		Short: "Create the lab cluster (or reuse it), with every scenario image preloaded",
		Example: `  lab cluster create
  lab cluster create --workers 2
  LAB_NODE_IMAGE=kindest/node:v1.35.4 lab cluster create --merge-kubeconfig`,
		Args: cobra.NoArgs,
		RunE: runE(f, o),
	}
	c.Flags().IntVar(&o.workers, "workers", 1, "number of worker nodes")
	c.Flags().StringVar(&o.image, "image", "", "kind node image (default $LAB_NODE_IMAGE or "+cluster.DefaultNodeImage+")")
	c.Flags().BoolVar(&o.merge, "merge-kubeconfig", false, "also add the cluster to your kubeconfig (~/.kube/config or $KUBECONFIG)")
	c.Flags().DurationVar(&o.wait, "wait", 5*time.Minute, "how long to wait for nodes and system Pods")
	return c
}

// complete adds the images every scenario uses, to be loaded into the new nodes.
func (o *clusterCreateOptions) complete(f *Factory, _ *cobra.Command, _ []string) error {
	cat, err := f.Catalog()
	if err != nil {
		return err
	}
	o.images = cat.Images()
	return nil
}

func (o *clusterCreateOptions) validate() error {
	if o.workers < 1 || o.workers > kindconfigs.MaxWorkers {
		return fmt.Errorf("--workers must be between 1 and %d (scenarios need a worker), got %d", kindconfigs.MaxWorkers, o.workers)
	}
	return nil
}

func (o *clusterCreateOptions) run(ctx context.Context, f *Factory) error {
	cl, reused, err := createCluster(ctx, f,
		cluster.CreateWithWorkers(o.workers), cluster.CreateWithNodeImage(o.image),
		cluster.CreateWithImages(o.images), cluster.CreateWithMergeKubeconfig(o.merge), cluster.CreateWithWait(o.wait))
	if err != nil {
		return err
	}
	verb := "Created"
	if reused {
		verb = "Reusing"
	}
	fmt.Fprintf(f.Out, "%s lab cluster %q (id %s). Use it with:\n\n  export KUBECONFIG=%s\n\n", verb, cl.Name, cl.ID, cl.Kubeconfig)
	return nil
}

func newClusterDeleteCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "delete",
		Short:   "Delete the lab cluster and any cluster lab created for its exam (never a cluster lab did not create)",
		Example: "  lab cluster delete\n  lab cluster delete --name lab2",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := f.Provider()
			if err != nil {
				return err
			}
			st, err := f.Store()
			if err != nil {
				return err
			}
			unlock, err := lockCluster(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer unlock()
			// The exam's record, which names its clusters, goes with the cluster: its clusters go first.
			e, err := session.ReadExam(st, f.ClusterName)
			if err != nil {
				return err
			}
			if err := session.DeleteExamClusters(cmd.Context(), p, e); err != nil {
				return err
			}
			if err := p.Delete(cmd.Context(), f.ClusterName); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Deleted lab cluster %q\n", f.ClusterName)
			return nil
		},
	}
}

func newClusterStatusCmd(f *Factory) *cobra.Command {
	var out outputFlags
	c := &cobra.Command{
		Use:     "status",
		Short:   "Show the lab cluster's state and the KUBECONFIG line to use it",
		Example: "  lab cluster status\n  lab cluster status -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			p, err := f.Provider()
			if err != nil {
				return err
			}
			st := p.Status(cmd.Context(), f.ClusterName)
			// A script reads the state from the JSON; a person reads it, and a shell tests the exit code.
			return out.print(f.Out, st, func() error {
				printClusterStatus(f, st)
				if st.State != cluster.StateRunning {
					return &ExitError{Code: 1, Silent: true, Err: fmt.Errorf("cluster %s is %s", st.Name, st.State)}
				}
				return nil
			})
		},
	}
	out.addFlags(c)
	return c
}

func printClusterStatus(f *Factory, st cluster.Status) {
	fmt.Fprintf(f.Out, "Cluster:  %s\nState:    %s\n", st.Name, st.State)
	if st.ID != "" {
		fmt.Fprintf(f.Out, "ID:       %s\nImage:    %s\n", st.ID, st.NodeImage)
	}
	for _, w := range st.Warnings {
		fmt.Fprintf(f.Out, "Warning:  %s\n", w)
	}
	if st.Message != "" {
		fmt.Fprintf(f.Out, "Message:  %s\n", st.Message)
	}
	if len(st.Nodes) > 0 {
		t := newTable(f.Out)
		t.AppendHeader(row("NAME", "ROLE", "STATUS", "VERSION"))
		for _, n := range st.Nodes {
			status := "Ready"
			if !n.Ready {
				status = "NotReady"
			}
			t.AppendRow(row(n.Name, n.Role, status, n.Version))
		}
		fmt.Fprintln(f.Out)
		t.Render()
	}
	if st.Kubeconfig != "" {
		fmt.Fprintf(f.Out, "\nexport KUBECONFIG=%s\n", st.Kubeconfig)
	}
}
