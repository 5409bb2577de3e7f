package commands

import (
	"context"
	"fmt"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/doctor"
	"github.com/cka-lab/lab/kindconfigs"
)

type doctorOptions struct {
	out     outputFlags
	workers int
}

func newDoctorCmd(f *Factory) *cobra.Command {
	o := &doctorOptions{}
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check that this machine can run lab clusters, and say the command that fixes each problem",
		Long: `doctor checks Docker (reachable, its CPUs and memory), free memory, free disk in Docker's data root,
the inotify limits, the cgroup version, the nodes' platform against this lab build, kubectl's version skew
against the node image's Kubernetes, and which pinned components lab finds. It changes nothing and needs no
cluster. It exits 1 when something would stop a lab cluster.`,
		Example: "  lab doctor\n  lab doctor --workers 2\n  lab doctor -o json | jq '.checks[] | select(.status == \"problem\")'",
		Args:    cobra.NoArgs,
		RunE:    runE(f, o),
	}
	o.out.addFlags(c)
	c.Flags().IntVar(&o.workers, "workers", 1, "judge memory and disk for a cluster with this many workers, as `lab cluster create --workers`")
	return c
}

func (o *doctorOptions) complete(*Factory, *cobra.Command, []string) error { return nil }

func (o *doctorOptions) validate() error {
	if o.workers < 1 || o.workers > kindconfigs.MaxWorkers {
		return fmt.Errorf("--workers must be between 1 and %d, got %d", kindconfigs.MaxWorkers, o.workers)
	}
	return o.out.validate()
}

func (o *doctorOptions) run(ctx context.Context, f *Factory) error {
	r := doctor.Judge(doctor.Gather(ctx, o.workers))
	err := o.out.print(f.Out, r, func() error {
		printDoctor(f, r)
		return nil
	})
	if err == nil && r.Problems > 0 {
		// The report said what is wrong; a script reads the exit code.
		return &ExitError{Code: 1, Silent: true, Err: fmt.Errorf("%d problem(s)", r.Problems)}
	}
	return err
}

func printDoctor(f *Factory, r doctor.Report) {
	marks := map[doctor.Status]string{
		doctor.OK: color.GreenString("✓"), doctor.Problem: color.RedString("✗"),
		doctor.Warning: color.YellowString("!"), doctor.Unknown: color.New(color.Faint).Sprint("·"),
	}
	for _, c := range r.Checks {
		fmt.Fprintf(f.Out, "%s %s\n", marks[c.Status], c.Message)
		if c.Fix != "" {
			fmt.Fprintf(f.Out, "    fix: %s\n", c.Fix)
		}
	}
	switch {
	case r.Problems > 0:
		fmt.Fprintf(f.Out, "\n%d problem(s), %d warning(s): fix the problems before `lab cluster create`.\n", r.Problems, r.Warnings)
	case r.Warnings > 0:
		fmt.Fprintf(f.Out, "\nNo problems; %d warning(s).\n", r.Warnings)
	default:
		fmt.Fprintln(f.Out, "\nNo problems.")
	}
}
