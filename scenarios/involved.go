package scenarios

import "strings"

// Involved is what the scenario's setup, faults, builds and checks name: the namespaces, and the objects as
// "Kind/namespace/name". Coaching (internal/coach) calls a learner's write outside them one the task did not
// involve.
func (s *Scenario) Involved() (namespaces, objects map[string]bool) {
	namespaces, objects = map[string]bool{}, s.createdObjects()
	for _, list := range [][]Check{s.Symptom, s.Checks, s.Collateral} {
		for i := range list {
			fp := list[i].Touches()
			for _, ns := range fp.Namespaces {
				if ns != "" {
					namespaces[ns] = true
				}
			}
			for _, o := range fp.Objects {
				if o.Exists {
					objects[o.key()] = true
				}
			}
			if fp.System {
				namespaces["kube-system"] = true
			}
		}
	}
	for _, f := range s.Faults {
		fp := f.Touches()
		// A node's taint, label or cordon is undone on the Node object, a write the task involves.
		for _, n := range fp.Nodes {
			if n.Object {
				objects["Node//"+n.Name] = true
			}
		}
		for _, ns := range fp.Namespaces {
			namespaces[ns] = true
		}
		if fp.System {
			namespaces["kube-system"] = true
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

// systemCustomFaults and systemCustomChecks are the custom faults and checks about objects in kube-system they
// find at run time (the CNI's DaemonSet, metrics-server), which their arguments do not name.
var (
	systemCustomFaults = map[string]bool{"excludeFromCNIDaemonSet": true, "installMetricsServer": true}
	systemCustomChecks = map[string]bool{"cniDaemonSetReadyOn": true}
)
