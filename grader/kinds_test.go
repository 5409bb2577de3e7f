package grader

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/scenarios"
)

// Every check kind the scenario format has must be named by Check.Kind and evaluated by Evaluate: a kind
// added to the struct but missed in either would load, lint and then never be graded.
func TestEveryCheckKindIsEvaluated(t *testing.T) {
	env := Env{Clients: &kube.Clients{Kube: fake.NewClientset()}, Nodes: func() ([]nodes.Node, error) { return nil, nil }}
	typ := reflect.TypeOf(scenarios.Check{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Pointer {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		t.Run(tag, func(t *testing.T) {
			var c scenarios.Check
			reflect.ValueOf(&c).Elem().Field(i).Set(reflect.New(f.Type.Elem()))
			if name, n := c.Kind(); name != tag || n != 1 {
				t.Fatalf("Check.Kind() = %q, %d: add %q to its list", name, n, tag)
			}
			if r := evaluateRecovering(env, c); strings.Contains(r.Evidence, "has no kind") {
				t.Fatalf("Evaluate does not handle %s: add its case", tag)
			}
		})
	}
}

// evaluateRecovering evaluates c; an evaluator that panics on an empty check and a fake cluster still proves
// Evaluate reached it.
func evaluateRecovering(env Env, c scenarios.Check) (r Result) {
	defer func() {
		if recover() != nil {
			r = Result{Evidence: "reached its evaluator"}
		}
	}()
	return Evaluate(context.Background(), env, c)
}
