package grader

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cka-lab/lab/internal/operator"
)

// operatorPasses is how long an operator that may now act takes to show it: three of its passes. On a busy
// machine one pass may come late, and the Deployment it makes must exist before its rollout can be waited for.
const operatorPasses = 3 * operator.DefaultInterval

// operated is a custom object an operatorReconciled check names.
type operated struct{ resource, namespace, name string }

func (o operated) String() string { return o.resource + "/" + o.name }

// unreconciled reads the objects in os and returns those whose status does not report their current
// generation (an operator has yet to act on them), with that generation.
func (e Env) unreconciled(ctx context.Context, os []operated) (map[operated]int64, error) {
	out := map[operated]int64{}
	for _, o := range os {
		gvr, err := e.served(schema.ParseGroupResource(o.resource))
		if err != nil {
			continue // no such resource: the check says so, and nothing will change by itself
		}
		u, err := e.Clients.Dynamic.Resource(gvr).Namespace(o.namespace).Get(ctx, o.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s %s/%s: %w", o.resource, o.namespace, o.name, err)
		}
		if observed, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); !found || observed < u.GetGeneration() {
			out[o] = u.GetGeneration()
		}
	}
	return out, nil
}

// operatorsWaiting waits, for operatorPasses from the check's start, for the custom objects whose operator has
// not reported their current generation: a repaired permission or a changed object shows at its next pass, and
// then a Deployment rolls out. An operator that still cannot act (its RBAC still wrong) reports nothing, and
// the verdict comes when the passes are over.
func (v *view) operatorsWaiting(since time.Time) []Waiting {
	var w []Waiting
	for o, gen := range v.unreconciled {
		w = append(w, Waiting{Key: fmt.Sprintf("operated/%s/%s|%d", o.namespace, o, gen),
			What:  fmt.Sprintf("%s: its operator has not reported generation %d yet (it passes every %s)", o, gen, operator.DefaultInterval),
			Until: since.Add(operatorPasses)})
	}
	return w
}
