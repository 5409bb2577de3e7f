// Package bench measures lab on a real cluster: cold cluster creation against plain kind, warm start, check
// and reset per scenario, the cost of a cluster in memory and CPU, and how many clusters the machine holds.
// Every figure is the median (with min and max) of several runs, never one run.
package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cka-lab/lab/internal/ui"
)

// Options say what to measure.
type Options struct {
	Runs      int
	Scenarios []string
	// Cold times cold creates against plain kind; Capacity creates clusters until the machine is full (both
	// slow; off to measure the rest only).
	Cold        bool
	Capacity    bool
	MaxClusters int
	// Name is the warm cluster's name (its node containers are named after it, so two benches on one machine
	// need different names).
	Name string
	// Self is the lab binary measured; KubectlDir the directory of kubectl for reference solutions (found on
	// $KUBECTL, PATH or the offline build's cache when empty).
	Self       string
	KubectlDir string
	NodeImage  string
}

// Stat is one measured quantity over several runs.
type Stat struct {
	Name   string  `json:"name"`
	Unit   string  `json:"unit"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Runs   int     `json:"runs"`
}

// Report is the result of a bench run.
type Report struct {
	Date     string             `json:"date"`
	Machine  string             `json:"machine"`
	Stats    []Stat             `json:"stats"`
	Ratios   map[string]float64 `json:"ratios"`
	Capacity *int               `json:"capacity,omitempty"`
}

func (r *Report) add(name, unit string, samples []float64) Stat {
	s := summarize(name, unit, samples)
	r.Stats = append(r.Stats, s)
	return s
}

func summarize(name, unit string, samples []float64) Stat {
	s := Stat{Name: name, Unit: unit, Runs: len(samples)}
	if len(samples) == 0 {
		return s
	}
	v := slices.Clone(samples)
	slices.Sort(v)
	s.Min, s.Max = v[0], v[len(v)-1]
	if len(v)%2 == 1 {
		s.Median = v[len(v)/2]
	} else {
		s.Median = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return s
}

// Bench runs the measurements. Clusters it makes are named lab-bench-*, in a state directory of its own, and
// deleted at the end.
type Bench struct {
	o      Options
	status *ui.Status
	state  string
	report *Report
}

// New prepares a bench run.
func New(o Options, status *ui.Status) (*Bench, error) {
	if o.Runs < 1 {
		return nil, fmt.Errorf("--runs must be at least 1")
	}
	if o.Name == "" {
		o.Name = "lab-bench"
	}
	if o.KubectlDir == "" {
		if k, err := lookKubectl(); err == nil {
			o.KubectlDir = filepath.Dir(k)
		}
	}
	state, err := os.MkdirTemp("", "lab-bench-")
	if err != nil {
		return nil, err
	}
	return &Bench{o: o, status: status, state: state, report: &Report{
		Date: time.Now().UTC().Format("2006-01-02"), Machine: machine(), Ratios: map[string]float64{},
	}}, nil
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

func machine() string {
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0]); len(f) >= 2 {
			mem = fmt.Sprintf(", %s kB RAM", f[1])
		}
	}
	return fmt.Sprintf("%d CPUs%s, %s/%s", runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH)
}

// lab runs the measured binary against the bench's own state and returns how long it took.
func (b *Bench) lab(ctx context.Context, cluster string, args ...string) (time.Duration, string, error) {
	cmd := exec.CommandContext(ctx, b.o.Self, args...)
	cmd.Env = b.env(cluster)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		return took, string(out), fmt.Errorf("lab %s: %w\n%s", strings.Join(args, " "), err, tail(string(out)))
	}
	return took, string(out), nil
}

// failingCheck runs `lab check` where it must fail (exit 1) and returns how long it took.
func (b *Bench) failingCheck(ctx context.Context, cluster string) (time.Duration, error) {
	took, out, err := b.lab(ctx, cluster, "check")
	var exit *exec.ExitError
	switch {
	case err == nil:
		return took, fmt.Errorf("lab check passed a wrong fix:\n%s", tail(out))
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return took, nil
	}
	return took, err
}

func (b *Bench) env(cluster string) []string {
	path := filepath.Dir(b.o.Self)
	if b.o.KubectlDir != "" {
		path += ":" + b.o.KubectlDir
	}
	env := append(os.Environ(), "LAB_STATE_DIR="+b.state, "LAB_CLUSTER="+cluster, "NO_COLOR=1",
		"KUBECONFIG="+filepath.Join(b.state, "clusters", cluster, "kubeconfig"), "PATH="+path+":"+os.Getenv("PATH"))
	if b.o.NodeImage != "" {
		env = append(env, "LAB_NODE_IMAGE="+b.o.NodeImage)
	}
	return env
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, "\n")
}

func seconds(d time.Duration) float64 { return d.Seconds() }
