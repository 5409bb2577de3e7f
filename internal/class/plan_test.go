package class

import (
	"testing"
	"time"
)

func TestTimeLeft(t *testing.T) {
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	p := Plan{StartedAt: start, TimeLimit: time.Hour}
	if got := p.TimeLeft(start.Add(20 * time.Minute)); got != 40*time.Minute {
		t.Errorf("running: %v", got)
	}
	p.pause(start.Add(20 * time.Minute))
	p.pause(start.Add(25 * time.Minute)) // pausing twice keeps the first pause
	if got := p.TimeLeft(start.Add(50 * time.Minute)); got != 40*time.Minute {
		t.Errorf("paused: %v", got)
	}
	p.resume(start.Add(30 * time.Minute))
	if got := p.TimeLeft(start.Add(30 * time.Minute)); got != 40*time.Minute {
		t.Errorf("resumed: %v", got)
	}
	p.Extra += 5 * time.Minute
	if got := p.TimeLeft(start.Add(30 * time.Minute)); got != 45*time.Minute {
		t.Errorf("extended: %v", got)
	}
	if got := p.TimeLeft(start.Add(3 * time.Hour)); got != 0 {
		t.Errorf("over: %v", got)
	}
}

func TestPlanTranslatedToLearnerClock(t *testing.T) {
	server := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	st := planState{Plan: Plan{StartedAt: server.Add(-10 * time.Minute), TimeLimit: time.Hour}, ServerTime: server}
	learnerNow := server.Add(-7 * time.Minute) // the learner's clock is 7 minutes slow
	if got := st.local(learnerNow).TimeLeft(learnerNow); got != 50*time.Minute {
		t.Errorf("time left on the learner's clock = %v, want 50m", got)
	}
}

func TestPlanStart(t *testing.T) {
	for _, bad := range []Plan{
		{TimeLimit: time.Hour},
		{Scenarios: []string{"a", "a"}, TimeLimit: time.Hour},
		{Scenarios: []string{"a"}},
	} {
		if _, err := bad.start(time.Now()); err == nil {
			t.Errorf("plan %+v accepted", bad)
		}
	}
	p, err := Plan{Scenarios: []string{"a"}, TimeLimit: time.Hour}.start(time.Now())
	if err != nil || p.ClassID == "" || p.Title == "" || p.StartedAt.IsZero() || p.RevealedHints == nil {
		t.Errorf("defaults not filled: %+v, %v", p, err)
	}
}
