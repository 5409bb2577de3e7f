package injector

import (
	"reflect"
	"testing"

	"github.com/cka-lab/lab/scenarios"
)

// Every fault kind the scenario format has is injected, and nothing else is registered: a kind without an
// injector would load, lint and then never break anything.
func TestEveryFaultKindIsInjected(t *testing.T) {
	kinds := scenarios.FaultKinds()
	for name, k := range kinds {
		if _, ok := injectors[reflect.TypeOf(k)]; !ok {
			t.Errorf("fault kind %s (%T) has no injector: add its line to injectors", name, k)
		}
	}
	if len(injectors) > len(kinds) {
		t.Errorf("%d injectors for %d fault kinds: one is registered for a type that is no fault kind", len(injectors), len(kinds))
	}
}
