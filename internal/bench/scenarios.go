package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"time"

	"github.com/cka-lab/lab/scenarios"
)

// warm measures, on one warm cluster, each scenario's start (until the symptom is observed), the verdict on its
// first wrong fix, check right after the reference solution and again on the fixed and converged cluster, and
// reset, several times each.
func (b *Bench) warm(ctx context.Context, cat *scenarios.Catalog, cluster string) (resets []float64, err error) {
	for _, id := range b.o.Scenarios {
		sc, err := cat.Get(id)
		if err != nil {
			return nil, err
		}
		var starts, mem, fixed, checks, wrong, rs []float64
		for i := range b.o.Runs {
			if len(sc.WrongFixes) > 0 {
				if err := b.status.Step(fmt.Sprintf("%s wrong fix %d/%d", id, i+1, b.o.Runs), func() error {
					took, err := b.wrongFixVerdict(ctx, cluster, sc, i+1)
					wrong = append(wrong, seconds(took))
					return err
				}); err != nil {
					return nil, err
				}
			}
			if err := b.status.Step(fmt.Sprintf("%s run %d/%d", id, i+1, b.o.Runs), func() error {
				took, _, err := b.lab(ctx, cluster, "start", id, "--seed", fmt.Sprint(i+1))
				if err != nil {
					return err
				}
				starts = append(starts, seconds(took))
				// Started is when the components a scenario installs (metrics-server, a Gateway controller)
				// run beside the cluster's own.
				u, err := sampleUsage(ctx, cluster)
				if err != nil {
					return err
				}
				mem = append(mem, u.memMiB)
				inst, err := b.current(ctx, cluster, sc)
				if err != nil {
					return err
				}
				if err := b.solve(ctx, cluster, inst.Solution); err != nil {
					return err
				}
				// The first check is the learner's right after the reference solution (whose own steps wait for
				// the rollout); the second runs on a converged cluster, the grader's stability hold (three passing
				// rounds) included.
				if took, _, err = b.lab(ctx, cluster, "check"); err != nil {
					return err
				}
				fixed = append(fixed, seconds(took))
				took, _, err = b.lab(ctx, cluster, "check")
				if err != nil {
					return err
				}
				checks = append(checks, seconds(took))
				took, _, err = b.lab(ctx, cluster, "reset")
				rs = append(rs, seconds(took))
				return err
			}); err != nil {
				return nil, err
			}
		}
		b.report.add(id+": start until the symptom is observed", "s", starts)
		b.report.add(id+": cluster memory once started, its components included", "MiB", mem)
		b.report.add(id+": check right after the reference solution", "s", fixed)
		b.report.add(id+": check on a fixed cluster", "s", checks)
		if len(wrong) > 0 {
			b.report.add(id+": check of the first wrong fix (verdict)", "s", wrong)
		}
		b.report.add(id+": reset", "s", rs)
		resets = append(resets, rs...)
	}
	return resets, nil
}

// wrongFixVerdict starts the scenario, applies its first wrong fix as a learner would and times the learner's
// `lab check` until its verdict (which must fail), then resets.
func (b *Bench) wrongFixVerdict(ctx context.Context, cluster string, sc *scenarios.Scenario, seed int) (time.Duration, error) {
	if _, _, err := b.lab(ctx, cluster, "start", sc.ID, "--seed", fmt.Sprint(seed)); err != nil {
		return 0, err
	}
	inst, err := b.current(ctx, cluster, sc)
	if err != nil {
		return 0, err
	}
	if err := b.solve(ctx, cluster, inst.WrongFixes[0].Run); err != nil {
		return 0, err
	}
	took, err := b.failingCheck(ctx, cluster)
	if err != nil {
		return took, fmt.Errorf("the wrong fix %q of %s: %w", inst.WrongFixes[0].Name, sc.ID, err)
	}
	_, _, err = b.lab(ctx, cluster, "reset")
	return took, err
}

// current is the started attempt's instance, with the values lab chose on the cluster.
func (b *Bench) current(ctx context.Context, cluster string, sc *scenarios.Scenario) (*scenarios.Instance, error) {
	_, out, err := b.lab(ctx, cluster, "status", "-o", "json")
	if err != nil {
		return nil, err
	}
	var st struct {
		Attempt struct {
			Seed   int64             `json:"seed"`
			Values map[string]string `json:"values"`
		} `json:"attempt"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		return nil, fmt.Errorf("read lab status: %w", err)
	}
	return sc.WithValues(st.Attempt.Seed, st.Attempt.Values)
}

// solve runs a solution's or a wrong fix's steps as the learner's shell would.
func (b *Bench) solve(ctx context.Context, cluster string, steps []string) error {
	for _, step := range steps {
		stepCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		cmd := exec.CommandContext(stepCtx, "bash", "-eo", "pipefail", "-c", step)
		cmd.Env = b.env(cluster)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("step %q: %w\n%s", step, err, tail(string(out)))
		}
	}
	return nil
}
