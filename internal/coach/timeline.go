package coach

import "time"

// Timeline is one exam question's part of the learner's writes: when they began and ended, and the wrong
// turns among them. An exam grades once, at the end, so the time to fix is the span of the question's writes.
type Timeline struct {
	// AfterSeconds is from the exam's start to the first write.
	AfterSeconds float64   `json:"afterSeconds"`
	FirstWrite   time.Time `json:"firstWrite"`
	LastWrite    time.Time `json:"lastWrite"`
	// FixSeconds is from the first write to the last.
	FixSeconds float64 `json:"fixSeconds"`
	Writes     int     `json:"writes"`
	WrongTurns []Note  `json:"wrongTurns"`
}

// involves reports a write to an object of the scope: in one of its namespaces, or one it names.
func (s Scope) involves(ref ObjectRef) bool {
	return (ref.Namespace != "" && s.Namespaces[ref.Namespace]) || s.Objects[kindKey(ref)]
}

// Timelines divides the learner's writes (Learner's result, since start) among an exam's questions by what each involves,
// and returns each question's timeline (nil for a question without writes) and the notes on the writes no
// question involves.
func Timelines(events []Event, start time.Time, scopes []Scope) (timelines []*Timeline, rest []Note) {
	per := make([][]Event, len(scopes))
	var others []Event
	for _, e := range events {
		owned := false
		for i, s := range scopes {
			if s.involves(*e.ObjectRef) {
				per[i], owned = append(per[i], e), true
			}
		}
		if !owned {
			others = append(others, e)
		}
	}
	timelines = make([]*Timeline, len(scopes))
	for i, evs := range per {
		if len(evs) == 0 {
			continue
		}
		first, last := evs[0].Received, evs[len(evs)-1].Received
		timelines[i] = &Timeline{AfterSeconds: first.Sub(start).Seconds(), FirstWrite: first, LastWrite: last, FixSeconds: last.Sub(first).Seconds(), Writes: len(evs),
			WrongTurns: nonNil(Notes(evs, scopes[i]))}
	}
	return timelines, Notes(others, Scope{})
}

func nonNil(notes []Note) []Note {
	if notes == nil {
		return []Note{}
	}
	return notes
}
