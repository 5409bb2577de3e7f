package injector

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/cka-lab/lab/scenarios"
)

// Every fault kind the scenario format has must be named by Fault.Kind and applied by Inject: a kind added to
// the struct but missed in either would load, lint and then never break anything.
func TestEveryFaultKindIsInjected(t *testing.T) {
	typ := reflect.TypeOf(scenarios.Fault{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Pointer {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		t.Run(tag, func(t *testing.T) {
			var fault scenarios.Fault
			reflect.ValueOf(&fault).Elem().Field(i).Set(reflect.New(f.Type.Elem()))
			if name, n := fault.Kind(); name != tag || n != 1 {
				t.Fatalf("Fault.Kind() = %q, %d: add %q to its list", name, n, tag)
			}
			if err := injectRecovering(fault); err != nil && strings.Contains(err.Error(), "fault has no kind") {
				t.Fatalf("Inject does not handle %s: add its case", tag)
			}
		})
	}
}

// injectRecovering injects f with no cluster; an injector that panics without one still proves Inject
// reached it.
func injectRecovering(f scenarios.Fault) (err error) {
	defer func() {
		if recover() != nil {
			err = nil
		}
	}()
	return New(Env{}, nil).Inject(context.Background(), f)
}
