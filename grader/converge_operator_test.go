package grader

import (
	"testing"
	"time"
)

// A custom object its operator has not reported is waited for a few operator passes from the check's start,
// and no longer: an operator that still cannot act gives a failing verdict then.
func TestOperatorsWaitAFewPasses(t *testing.T) {
	since := time.Now()
	o := operated{"webapps.platform.example.com", "shop", "checkout"}
	v := &view{unreconciled: map[operated]int64{o: 2}}
	w := v.operatorsWaiting(since)
	if len(w) != 1 || !w[0].Until.Equal(since.Add(operatorPasses)) {
		t.Fatalf("an unreconciled object: %+v, want a wait until %s after the start", w, operatorPasses)
	}
	if w := (&convergence{}).still(w, since.Add(time.Second)); len(w) != 1 {
		t.Errorf("a second into the check the object is no longer waited for: %+v", w)
	}
	if w := (&convergence{}).still(w, since.Add(operatorPasses+time.Second)); len(w) != 0 {
		t.Errorf("after %s the object is still waited for: %+v", operatorPasses, w)
	}
	if w := (&view{}).operatorsWaiting(since); len(w) != 0 {
		t.Errorf("nothing unreconciled, yet waiting: %+v", w)
	}
}
