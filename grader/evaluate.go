// Package grader decides from live cluster state whether a scenario's checks hold: each check is evaluated
// against the API server (or inside a node), failures carry the evidence that contradicts them and the stage
// of the Pod's journey where it stopped, and `lab check` runs them as ginkgo specs.
package grader

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/scenarios"
)

// Env is the cluster checks read.
type Env struct {
	Clients *kube.Clients
	Nodes   func() ([]nodes.Node, error)
	// Stage is the scenario's stage: where a failing check that is not about a Pod points the learner.
	Stage journey.Stage
	// Shown is when the task was shown (zero: unknown): an object created after it is the learner's.
	Shown time.Time
}

// Result is one evaluation of a check.
type Result struct {
	OK       bool          `json:"ok"`
	Evidence string        `json:"evidence"`
	Stage    journey.Stage `json:"stage,omitempty"`
	// viaWebhook marks a request the API server failed because it could not call an admission webhook: its
	// server is a workload, which may be coming back from a restart.
	viaWebhook bool
}

func pass(format string, args ...any) Result {
	return Result{OK: true, Evidence: fmt.Sprintf(format, args...)}
}

func (e Env) fail(format string, args ...any) Result {
	return Result{Evidence: fmt.Sprintf(format, args...), Stage: e.Stage}
}

// Evaluate evaluates a check once. An error reading the cluster is a failed result saying so: the grade is
// what the cluster shows now, and Eventually retries.
func Evaluate(ctx context.Context, env Env, c scenarios.Check) Result {
	switch {
	case c.PodsReady != nil:
		return env.podsReady(ctx, c.PodsReady)
	case c.PodState != nil:
		return env.podState(ctx, c.PodState)
	case c.Event != nil:
		return env.event(ctx, c.Event)
	case c.CanI != nil:
		return env.canI(ctx, c.CanI)
	case c.Field != nil:
		return env.field(ctx, c.Field)
	case c.Exists != nil:
		return env.exists(ctx, c.Exists.ObjectRef, true)
	case c.Absent != nil:
		return env.exists(ctx, c.Absent.ObjectRef, false)
	case c.Container != nil:
		return env.container(ctx, c.Container)
	case c.Tolerates != nil:
		return env.tolerates(ctx, c.Tolerates)
	case c.SameObject != nil:
		return env.sameObject(ctx, c.SameObject.ObjectRef)
	case c.Admission != nil:
		return env.admission(ctx, c.Admission)
	case c.Endpoints != nil:
		return env.endpoints(ctx, c.Endpoints)
	case c.HTTP != nil:
		return env.http(ctx, c.HTTP)
	case c.NodeTaint != nil:
		return env.nodeTaint(ctx, c.NodeTaint)
	case c.NodeReady != nil:
		return env.nodeReady(ctx, c.NodeReady)
	case c.Grants != nil:
		return env.grants(ctx, c.Grants)
	case c.NotClusterAdmin != nil:
		return env.notClusterAdmin(ctx, c.NotClusterAdmin)
	case c.KubeletConfig != nil:
		return env.kubeletConfig(ctx, c.KubeletConfig)
	case c.RunningFlag != nil:
		return env.runningFlag(ctx, c.RunningFlag)
	case c.NodeFile != nil:
		return env.nodeFile(ctx, c.NodeFile)
	case c.NodeExec != nil:
		return env.nodeExec(ctx, c.NodeExec)
	case c.Exec != nil:
		return env.exec(ctx, c.Exec)
	case c.Logs != nil:
		return env.logs(ctx, c.Logs)
	case c.Custom != nil:
		return env.custom(ctx, &c.Custom.Custom)
	}
	return env.fail("check %q has no kind", c.Name)
}
