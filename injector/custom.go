package injector

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/cka-lab/lab/scenarios"
)

// CustomFault is a fault written in Go for what scenario data cannot say. It must record prior state through
// the Injector's methods before it changes anything.
type CustomFault func(ctx context.Context, i *Injector, args map[string]string) error

var (
	customMu     sync.RWMutex
	customFaults = map[string]CustomFault{}
)

// Register adds a custom fault under name; registering a name twice is a programming error.
func Register(name string, f CustomFault) {
	customMu.Lock()
	defer customMu.Unlock()
	if _, dup := customFaults[name]; dup {
		panic("injector: custom fault registered twice: " + name)
	}
	customFaults[name] = f
}

// Registered reports whether a custom fault exists (for the scenario linter).
func Registered(name string) bool {
	customMu.RLock()
	defer customMu.RUnlock()
	_, ok := customFaults[name]
	return ok
}

func (i *Injector) custom(ctx context.Context, c *scenarios.CustomFault) error {
	customMu.RLock()
	f, ok := customFaults[c.Func]
	names := make([]string, 0, len(customFaults))
	for n := range customFaults {
		names = append(names, n)
	}
	customMu.RUnlock()
	if !ok {
		sort.Strings(names)
		return fmt.Errorf("no custom fault %q (registered: %s)", c.Func, strings.Join(names, ", "))
	}
	return f(ctx, i, c.Args)
}
