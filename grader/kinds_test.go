package grader

import (
	"reflect"
	"testing"

	"github.com/cka-lab/lab/scenarios"
)

// Every check kind the scenario format has is evaluated, and nothing else is registered: a kind without an
// evaluator would load, lint and then never be graded.
func TestEveryCheckKindIsEvaluated(t *testing.T) {
	kinds := scenarios.CheckKinds()
	for name, k := range kinds {
		if _, ok := evaluators[reflect.TypeOf(k)]; !ok {
			t.Errorf("check kind %s (%T) has no evaluator: add its line to evaluators", name, k)
		}
	}
	if len(evaluators) > len(kinds) {
		t.Errorf("%d evaluators for %d check kinds: one is registered for a type that is no check kind", len(evaluators), len(kinds))
	}
}
