package scenarios

import "strings"

// Involved is what the scenario's setup, faults, builds and checks name: the namespaces, and the objects as
// "Kind/namespace/name". Coaching (internal/coach) calls a learner's write outside them one the task did not
// involve.
func (s *Scenario) Involved() (namespaces, objects map[string]bool) {
	namespaces, objects = map[string]bool{}, s.createdObjects()
	for _, list := range [][]Check{s.Symptom, s.Checks, s.Collateral} {
		for i := range list {
			if ns := list[i].namespace(); ns != "" {
				namespaces[ns] = true
			}
			if o := list[i].object(); o != nil {
				objects[o.key()] = true
			}
		}
	}
	for key := range objects {
		kind, rest, _ := strings.Cut(key, "/")
		ns, name, _ := strings.Cut(rest, "/")
		if ns != "" {
			namespaces[ns] = true
		}
		if kind == "Namespace" {
			namespaces[name] = true
		}
	}
	return namespaces, objects
}
