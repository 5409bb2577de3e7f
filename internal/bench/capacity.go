package bench

import (
	"context"
	"fmt"

	"github.com/cka-lab/lab/internal/cluster/hostenv"
)

// capacity creates 2-node lab clusters until one fails or free memory would run short, counts those that came
// up Ready (create waits for every node and system Pod), and deletes them all.
func (b *Bench) capacity(ctx context.Context) error {
	var made []string
	defer func() {
		for _, name := range made {
			_, _, _ = b.lab(context.WithoutCancel(ctx), name, "cluster", "delete")
		}
	}()
	ready := 0
	for i := 1; i <= b.o.MaxClusters; i++ {
		if hostenv.CheckMemory(hostenv.AvailableMemory(), 1) != nil {
			b.status.Info("stopping at %d clusters: free memory would run short", ready)
			break
		}
		name := fmt.Sprintf("lab-bench-cap-%d", i)
		made = append(made, name)
		if err := b.status.Step(fmt.Sprintf("Capacity: cluster %d", i), func() error {
			_, _, err := b.lab(ctx, name, "cluster", "create")
			return err
		}); err != nil {
			b.status.Info("stopping at %d clusters: %v", ready, firstLine(err.Error()))
			break
		}
		ready++
	}
	b.report.Capacity = &ready
	return nil
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
