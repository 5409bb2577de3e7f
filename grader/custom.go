package grader

import (
	"context"
	"sync"

	"github.com/cka-lab/lab/scenarios"
)

// CustomCheck is a check written in Go for what scenario data cannot say.
type CustomCheck func(ctx context.Context, env Env, args map[string]string) Result

var (
	customMu     sync.RWMutex
	customChecks = map[string]CustomCheck{}
)

// Register adds a custom check; registering a name twice is a programming error.
func Register(name string, f CustomCheck) {
	customMu.Lock()
	defer customMu.Unlock()
	if _, dup := customChecks[name]; dup {
		panic("grader: custom check registered twice: " + name)
	}
	customChecks[name] = f
}

// Registered reports whether a custom check exists (for the scenario linter).
func Registered(name string) bool {
	customMu.RLock()
	defer customMu.RUnlock()
	_, ok := customChecks[name]
	return ok
}

func (e Env) custom(ctx context.Context, c *scenarios.CustomCheck) Result {
	customMu.RLock()
	f, ok := customChecks[c.Func]
	customMu.RUnlock()
	if !ok {
		return e.fail("no custom check %q is registered", c.Func)
	}
	return f(ctx, e, c.Args)
}
