package rotation

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The budgets, in spec-seconds (what one process of a two-process run spends in a spec): a slice about 18
// minutes of a two-process run's wall time, and the change's own scenarios up to 4 more, so the core (about 33
// minutes) and one slice keep `make test` within its 60 minutes on a 2-core machine.
const (
	DefaultBudget        = 2200
	DefaultChangedBudget = 500
	DefaultWindow        = 5
)

// OptionsFromEnv reads the plan's settings from the environment and the checkout at dir:
// E2E_SLICE (a slice's number from 1, "all" or "none"; default the commit count's slice), E2E_SLICE_BUDGET,
// E2E_CHANGED_BUDGET (spec-seconds) and E2E_CHANGED_WINDOW (commits).
func OptionsFromEnv(ctx context.Context, dir string) (Options, error) {
	o := Options{Budget: DefaultBudget, ChangedBudget: DefaultChangedBudget}
	num := func(k string, into *float64) error {
		if v := os.Getenv(k); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 {
				return fmt.Errorf("%s=%q: want a number of spec-seconds above 0", k, v)
			}
			*into = f
		}
		return nil
	}
	if err := num("E2E_SLICE_BUDGET", &o.Budget); err != nil {
		return o, err
	}
	if err := num("E2E_CHANGED_BUDGET", &o.ChangedBudget); err != nil {
		return o, err
	}
	window := DefaultWindow
	if v := os.Getenv("E2E_CHANGED_WINDOW"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return o, fmt.Errorf("E2E_CHANGED_WINDOW=%q: want a number of commits", v)
		}
		window = n
	}
	switch v := strings.ToLower(os.Getenv("E2E_SLICE")); v {
	case "":
	case "all":
		o.All = true
	case "none":
		o.None = true
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return o, fmt.Errorf("E2E_SLICE=%q: want a slice's number from 1, all or none", v)
		}
		o.Slice = n
	}
	ch, err := ReadChange(ctx, dir, window)
	if err != nil {
		return o, fmt.Errorf("read the change to plan the e2e extras (set E2E_SLICE to choose without git): %w", err)
	}
	o.Commits, o.Window, o.change = ch.Commits, ch.Window, ch
	return o, nil
}
