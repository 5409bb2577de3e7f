package bench

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/cka-lab/lab/internal/docker"
)

// usage is one `docker stats` sample of a cluster's node containers together.
type usage struct {
	memMiB float64
	cpuPct float64
}

func sampleUsage(ctx context.Context, cluster string) (usage, error) {
	names, err := docker.Output(ctx, docker.Quick, "ps", "--filter", "label=io.x-k8s.kind.cluster="+cluster, "--format", "{{.Names}}")
	if err != nil {
		return usage{}, err
	}
	args := append([]string{"stats", "--no-stream", "--format", "{{json .}}"}, strings.Fields(string(names))...)
	out, err := docker.Output(ctx, docker.Quick, args...)
	if err != nil {
		return usage{}, err
	}
	var u usage
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var s struct{ MemUsage, CPUPerc string }
		if json.Unmarshal([]byte(line), &s) != nil {
			continue
		}
		u.memMiB += parseMiB(strings.TrimSpace(strings.SplitN(s.MemUsage, "/", 2)[0]))
		pct, _ := strconv.ParseFloat(strings.TrimSuffix(s.CPUPerc, "%"), 64)
		u.cpuPct += pct
	}
	return u, nil
}

// parseMiB reads docker's human sizes ("812.5MiB", "1.2GiB").
func parseMiB(s string) float64 {
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"GiB", 1024}, {"MiB", 1}, {"KiB", 1.0 / 1024}, {"kB", 1.0 / 1024}, {"B", 1.0 / (1 << 20)}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0
			}
			return f * u.mult
		}
	}
	return 0
}

// idleUsage samples the cluster at rest several times.
func (b *Bench) idleUsage(ctx context.Context, cluster string) error {
	var mem, cpu []float64
	for range max(b.o.Runs, 3) {
		u, err := sampleUsage(ctx, cluster)
		if err != nil {
			return err
		}
		mem, cpu = append(mem, u.memMiB), append(cpu, u.cpuPct)
	}
	b.report.add("cluster memory at idle (all node containers)", "MiB", mem)
	b.report.add("cluster CPU at idle (all node containers)", "%", cpu)
	return nil
}

// busyUsage samples the cluster every half second while f runs (a scenario start).
func (b *Bench) busyUsage(ctx context.Context, cluster string, f func() error) error {
	stop, done := make(chan struct{}), make(chan struct{})
	var mem, cpu []float64
	go func() {
		defer close(done)
		for {
			if u, err := sampleUsage(ctx, cluster); err == nil {
				mem, cpu = append(mem, u.memMiB), append(cpu, u.cpuPct)
			}
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	err := f()
	close(stop)
	<-done
	b.report.add("cluster memory during a start", "MiB", mem)
	b.report.add("cluster CPU during a start", "%", cpu)
	return err
}
