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
	// Log is every write, oldest first, for the exam's review.
	Log []Write `json:"log,omitempty"`
}

// Write is one of the learner's writes as the review lists it.
type Write struct {
	At   time.Time `json:"at"`
	Verb string    `json:"verb"`
	// Object is kubectl's name ("deployment/web"), with the subresource written, if any ("deployment/web/scale").
	Object    string `json:"object"`
	Namespace string `json:"namespace,omitempty"`
	User      string `json:"user"`
}

// log lists events as Writes.
func log(events []Event) []Write {
	out := make([]Write, 0, len(events))
	for _, e := range events {
		ref := *e.ObjectRef
		obj := singular(ref.Resource) + "/" + ref.Name
		if ref.Subresource != "" {
			obj += "/" + ref.Subresource
		}
		out = append(out, Write{At: e.Received, Verb: e.Verb, Object: obj, Namespace: ref.Namespace, User: e.User.Username})
	}
	return out
}

// involves reports a write to an object of the scope: in one of its namespaces, or one it names.
func (s Scope) involves(ref ObjectRef) bool {
	return (ref.Namespace != "" && s.Namespaces[ref.Namespace]) || s.Objects[kindKey(ref)]
}

// Timelines takes the learner's writes since start as Split divided them among an exam's questions (per, with
// the scopes it used) and returns each question's timeline (nil for a question without writes) and the notes
// on the writes no question involves (others).
func Timelines(per [][]Event, others []Event, start time.Time, scopes []Scope) (timelines []*Timeline, rest []Note) {
	timelines = make([]*Timeline, len(scopes))
	for i, evs := range per {
		if len(evs) == 0 {
			continue
		}
		first, last := evs[0].Received, evs[len(evs)-1].Received
		timelines[i] = &Timeline{AfterSeconds: first.Sub(start).Seconds(), FirstWrite: first, LastWrite: last, FixSeconds: last.Sub(first).Seconds(), Writes: len(evs),
			WrongTurns: nonNil(Notes(evs, scopes[i])), Log: log(evs)}
	}
	return timelines, Notes(others, Scope{})
}

// Split divides the learner's writes among an exam's questions by what each involves (a write two questions
// involve counts for both), and returns the writes no question involves apart.
func Split(events []Event, scopes []Scope) (per [][]Event, others []Event) {
	per = make([][]Event, len(scopes))
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
	return per, others
}

// KindWrongHost is a note on a write made from another exam host than the question's.
const KindWrongHost = "wrong-host"

// WrongHost notes each object of a question that the learner changed from another exam host than host, the
// question's (hostOf names the host a user belongs to, "" for none), once per object and host; and says
// whether any of the question's writes came from its own host.
func WrongHost(events []Event, host string, hostOf func(user string) string) (notes []Note, fromHost bool) {
	seen := map[string]bool{}
	for _, e := range events {
		from := hostOf(e.User.Username)
		switch from {
		case host:
			fromHost = true
			continue
		case "":
			continue
		}
		ref := *e.ObjectRef
		name := singular(ref.Resource) + "/" + ref.Name
		if seen[from+" "+ref.Namespace+" "+name] {
			continue
		}
		seen[from+" "+ref.Namespace+" "+name] = true
		where := ""
		if ref.Namespace != "" {
			where = " in namespace " + ref.Namespace
		}
		notes = append(notes, Note{Kind: KindWrongHost, Object: name, Namespace: ref.Namespace, At: e.Received,
			Message: "you changed " + name + where + " on host " + from + "; the question was on host " + host})
	}
	return notes, fromHost
}

func nonNil(notes []Note) []Note {
	if notes == nil {
		return []Note{}
	}
	return notes
}
