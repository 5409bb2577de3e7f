// Package grader decides from live cluster state whether a scenario's checks hold: each check is evaluated
// against the API server (or inside a node), failures carry the evidence that contradicts them and the stage
// of the Pod's journey where it stopped, and `lab check` runs them as ginkgo specs.
package grader

import (
	"context"
	"fmt"
	"reflect"
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
	k := c.Spec()
	if k == nil {
		return env.fail("check %q has no kind", c.Name)
	}
	ev, ok := evaluators[reflect.TypeOf(k)]
	if !ok {
		return env.fail("check %q is of a kind lab cannot evaluate", c.Name)
	}
	return ev.eval(ctx, env, k)
}

// evaluator grades one check kind.
type evaluator struct {
	eval func(context.Context, Env, scenarios.Kind) Result
	// workload says the check reaches a running workload (exec in a Pod or a node, HTTP, endpoints, Pods
	// Ready, a custom check): it fails for a few seconds right after a kubelet restart or a replaced Pod
	// even on a correct fix.
	workload bool
}

// evaluators holds every check kind's evaluator by the kind's type, one line each.
var evaluators = evaluatorsOf(
	evaluates(Env.podsReady).reachingWorkload(),
	evaluates(Env.podState).reachingWorkload(),
	evaluates(Env.event),
	evaluates(Env.canI),
	evaluates(Env.field),
	evaluates(func(e Env, ctx context.Context, c *scenarios.ExistsCheck) Result {
		return e.exists(ctx, c.ObjectRef, true)
	}),
	evaluates(func(e Env, ctx context.Context, c *scenarios.AbsentCheck) Result {
		return e.exists(ctx, c.ObjectRef, false)
	}),
	evaluates(func(e Env, ctx context.Context, c *scenarios.SameObjectCheck) Result {
		return e.sameObject(ctx, c.ObjectRef)
	}),
	evaluates(Env.admission),
	evaluates(Env.endpoints).reachingWorkload(),
	evaluates(Env.http).reachingWorkload(),
	evaluates(Env.nodeTaint),
	evaluates(Env.nodeReady),
	evaluates(Env.notClusterAdmin),
	evaluates(Env.grants),
	evaluates(Env.nodeFile),
	evaluates(Env.runningFlag),
	evaluates(Env.kubeletConfig),
	evaluates(Env.tolerates),
	evaluates(Env.container),
	evaluates(Env.nodeExec).reachingWorkload(),
	evaluates(Env.exec).reachingWorkload(),
	evaluates(Env.logs),
	evaluates(Env.custom).reachingWorkload(),
	evaluates(Env.unchanged),
)

// registration is one kind's evaluator, by the kind's type.
type registration struct {
	kind reflect.Type
	evaluator
}

// evaluates registers eval for the check kind K.
func evaluates[K scenarios.Kind](eval func(Env, context.Context, K) Result) registration {
	return registration{reflect.TypeFor[K](), evaluator{eval: func(ctx context.Context, e Env, k scenarios.Kind) Result {
		return eval(e, ctx, k.(K))
	}}}
}

// reachingWorkload marks the kind as one that reaches a running workload.
func (r registration) reachingWorkload() registration {
	r.workload = true
	return r
}

func evaluatorsOf(rs ...registration) map[reflect.Type]evaluator {
	out := make(map[reflect.Type]evaluator, len(rs))
	for _, r := range rs {
		out[r.kind] = r.evaluator
	}
	return out
}
