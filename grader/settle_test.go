package grader

import (
	"testing"
	"time"

	"github.com/cka-lab/lab/scenarios"
)

func TestSettlingEndsTheWait(t *testing.T) {
	checks := []Planned{
		{Group: GroupChecks, Check: scenarios.Check{Name: "task"}},
		{Group: GroupChecks, Check: scenarios.Check{Name: "manifest", Decisive: true}},
		{Group: GroupCollateral, Check: scenarios.Check{Name: "collateral"}},
	}
	type round struct{ task, manifest, collateral bool }
	cases := []struct {
		name   string
		rounds []round
		every  time.Duration
		want   int // the round (1-based) that settles, 0 for none
	}{
		{"all hold", []round{{true, true, true}, {true, true, true}, {true, true, true}}, time.Second, 3},
		{"a decisive check keeps failing", []round{{false, false, true}, {false, false, true}, {false, false, true}}, time.Second, 3},
		{"a decisive check recovers", []round{{false, false, true}, {false, true, true}, {false, false, true}, {false, false, true}}, time.Second, 0},
		{"a failing task check alone waits", []round{{false, true, true}, {false, true, true}, {false, true, true}, {false, true, true}}, time.Second, 0},
		{"collateral broken briefly waits", []round{{true, true, false}, {true, true, false}, {true, true, false}}, time.Second, 0},
		{"collateral broken for long ends", []round{{true, true, false}, {true, true, false}, {true, true, false}}, 6 * time.Second, 3},
		{"collateral broken while the task fails waits", []round{{false, true, false}, {false, true, false}, {false, true, false}}, 6 * time.Second, 0},
	}
	for _, c := range cases {
		var s settling
		now, got := time.Unix(0, 0), 0
		for i, r := range c.rounds {
			results := []Result{{OK: r.task}, {OK: r.manifest}, {OK: r.collateral}}
			if s.done(checks, results, now) {
				got = i + 1
				break
			}
			now = now.Add(c.every)
		}
		if got != c.want {
			t.Errorf("%s: settled at round %d, want %d", c.name, got, c.want)
		}
	}
}
