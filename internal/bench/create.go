package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/cluster/hostenv"
	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/kindconfigs"
)

// coldCreate times `lab cluster create` against kind's own create with the same config and image, run after
// run in turn so both see the same machine, and deletes each cluster again.
func (b *Bench) coldCreate(ctx context.Context) error {
	image := b.o.NodeImage
	if image == "" {
		image = cluster.NodeImage()
	}
	d, err := hostenv.CheckDocker(ctx)
	if err != nil {
		return err
	}
	host, err := hostenv.Probe(ctx, d, image)
	if err != nil {
		return err
	}
	// Plain kind gets lab's audit log too, so the comparison measures lab's own steps, not the API server's.
	auditDir, err := filepath.Abs(filepath.Join(b.state, "kind-audit"))
	if err != nil {
		return fmt.Errorf("audit policy directory: %w", err)
	}
	if err := cluster.WriteAuditPolicy(auditDir); err != nil {
		return err
	}
	cfg, err := kindconfigs.Render(kindconfigs.Options{Workers: 1, CgroupV1: host.CgroupV1, NoSysResource: host.NoSysResource, AuditDir: auditDir})
	if err != nil {
		return err
	}
	var labTimes, kindTimes, usableTimes []float64
	const name = "lab-bench-cold"
	for i := range b.o.Runs {
		if err := b.status.Step(fmt.Sprintf("Cold create %d/%d: plain kind", i+1, b.o.Runs), func() error {
			p := kindcluster.NewProvider()
			start := time.Now()
			err := p.Create(name, kindcluster.CreateWithV1Alpha4Config(cfg), kindcluster.CreateWithNodeImage(image),
				kindcluster.CreateWithWaitForReady(5*time.Minute), kindcluster.CreateWithKubeconfigPath(b.state+"/kind-kubeconfig"))
			kindTimes = append(kindTimes, seconds(time.Since(start)))
			// kind's wait ends with the control-plane node Ready; a learner needs every node and system Pod.
			if err == nil {
				err = waitUsable(ctx, name, b.state+"/kind-kubeconfig")
				usableTimes = append(usableTimes, seconds(time.Since(start)))
			}
			if delErr := p.Delete(name, b.state+"/kind-kubeconfig"); err == nil {
				err = delErr
			}
			return err
		}); err != nil {
			return err
		}
		if err := b.status.Step(fmt.Sprintf("Cold create %d/%d: lab cluster create", i+1, b.o.Runs), func() error {
			took, _, err := b.lab(ctx, name, "cluster", "create")
			labTimes = append(labTimes, seconds(took))
			if _, _, delErr := b.lab(ctx, name, "cluster", "delete"); err == nil {
				err = delErr
			}
			return err
		}); err != nil {
			return err
		}
	}
	l := b.report.add("cold create: lab cluster create (2 nodes, images loaded)", "s", labTimes)
	k := b.report.add("cold create: plain kind create (same config and image)", "s", kindTimes)
	u := b.report.add("cold create: plain kind until all nodes and system Pods are Ready", "s", usableTimes)
	b.report.Ratios["cold create lab/kind"] = l.Median / k.Median
	b.report.Ratios["cold create lab-kind difference (s)"] = l.Median - k.Median
	b.report.Ratios["cold create lab/kind until usable"] = l.Median / u.Median
	b.report.Ratios["cold create lab-kind until usable difference (s)"] = l.Median - u.Median
	return nil
}

// waitUsable waits as lab does after its own create: every node Ready, every system Pod Running and Ready.
func waitUsable(ctx context.Context, name, kubeconfig string) error {
	clients, err := kube.FromKubeconfig(kubeconfig)
	if err != nil {
		return err
	}
	c := &cluster.Cluster{Record: cluster.Record{Name: name}, Clients: clients}
	return c.WaitReady(ctx, 5*time.Minute)
}
