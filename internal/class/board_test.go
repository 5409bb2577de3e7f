package class

import (
	"testing"
	"time"
)

func TestCellStatus(t *testing.T) {
	steps := []struct {
		r          Result
		wantStatus string
		wantScore  int
	}{
		{Result{Event: EventStart}, statusInProgress, 0},
		{Result{Event: EventHint, HintsTaken: 1}, statusInProgress, 0},
		{check("s", false, 4), statusFailed, 4},
		{Result{Event: EventHint, HintsTaken: 2}, statusFailed, 4},
		{check("s", true, 10), statusPassed, 10},
		// A pass sticks: experimenting after solving does not take it away.
		{check("s", false, 2), statusPassed, 10},
	}
	var c cell
	for i, step := range steps {
		step.r.At = time.Unix(int64(i), 0)
		c.apply(step.r)
		if c.Status != step.wantStatus || c.Score != step.wantScore {
			t.Fatalf("after step %d (%+v): %s %d, want %s %d", i, step.r, c.Status, c.Score, step.wantStatus, step.wantScore)
		}
	}
	if c.HintsTaken != 2 || c.TimeUsed != 10*time.Minute {
		t.Errorf("final cell = %+v", c)
	}
}
