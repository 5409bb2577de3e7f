package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/cka-lab/lab/scenarios"
)

// Run measures everything asked for and returns the report; clusters it made are deleted.
func (b *Bench) Run(ctx context.Context, cat *scenarios.Catalog) (*Report, error) {
	defer func() { _ = os.RemoveAll(b.state) }()
	if b.o.Cold {
		if err := b.coldCreate(ctx); err != nil {
			return nil, err
		}
	}
	warmCluster := b.o.Name
	if err := b.status.Step("Creating the warm cluster "+warmCluster, func() error {
		_, _, err := b.lab(ctx, warmCluster, "cluster", "create")
		return err
	}); err != nil {
		return nil, err
	}
	defer func() { _, _, _ = b.lab(context.WithoutCancel(ctx), warmCluster, "cluster", "delete") }()
	if err := b.idleUsage(ctx, warmCluster); err != nil {
		return nil, err
	}
	if len(b.o.Scenarios) > 0 {
		if err := b.busyUsage(ctx, warmCluster, func() error {
			_, _, err := b.lab(ctx, warmCluster, "start", b.o.Scenarios[0], "--seed", "1")
			if err == nil {
				_, _, err = b.lab(ctx, warmCluster, "reset")
			}
			return err
		}); err != nil {
			return nil, err
		}
	}
	resets, err := b.warm(ctx, cat, warmCluster)
	if err != nil {
		return nil, err
	}
	if len(resets) > 0 {
		r := summarize("reset", "s", resets)
		b.report.Stats = append(b.report.Stats, Stat{Name: "reset, all scenarios", Unit: "s", Median: r.Median, Min: r.Min, Max: r.Max, Runs: r.Runs})
		for _, s := range b.report.Stats {
			if s.Name == "cold create: lab cluster create (2 nodes, images loaded)" && r.Median > 0 {
				b.report.Ratios["recreate/reset (how many times faster reset is)"] = s.Median / r.Median
			}
		}
	}
	if b.o.Capacity {
		if err := b.capacity(ctx); err != nil {
			return nil, err
		}
	}
	return b.report, nil
}

// Print writes the report as a table.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "lab bench, %s, %s\n\n", r.Date, r.Machine)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MEASURE\tMEDIAN\tMIN\tMAX\tRUNS")
	for _, s := range r.Stats {
		fmt.Fprintf(tw, "%s\t%.1f %s\t%.1f\t%.1f\t%d\n", s.Name, s.Median, s.Unit, s.Min, s.Max, s.Runs)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	for k, v := range r.Ratios {
		fmt.Fprintf(w, "%s: %.2f\n", k, v)
	}
	if r.Capacity != nil {
		fmt.Fprintf(w, "2-node lab clusters this machine holds, all Ready: %d\n", *r.Capacity)
	}
}
