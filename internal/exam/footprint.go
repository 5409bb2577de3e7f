// Package exam is the exam drill's pure logic: which scenarios can run together, and on which of the exam's
// clusters, without one fault changing another question, and how a graded exam is scored against the CKA's
// pass mark.
package exam

import (
	"fmt"
	"slices"

	"github.com/cka-lab/lab/internal/manifest"

	"github.com/cka-lab/lab/scenarios"
)

// Footprint is what a scenario instance changes on the cluster.
type Footprint struct {
	// Namespaces the instance creates or changes objects in.
	Namespaces []string
	// ClusterWide is set when it changes anything outside its namespaces: a node, a webhook, a cluster-scoped
	// object, or a custom fault whose reach lab cannot see. Why names the first such change.
	ClusterWide bool
	Why         string
	// Nodes the instance's faults change.
	Nodes []string
}

// FootprintOf reads an instance's setup and faults. Setup counts too: a cluster-scoped object made during setup
// is shared with every other question just as a fault's is.
func FootprintOf(inst *scenarios.Instance) (Footprint, error) {
	fp := Footprint{}
	wide := func(why string) {
		if !fp.ClusterWide {
			fp.ClusterWide, fp.Why = true, why
		}
	}
	for _, m := range inst.Setup {
		if err := fp.addManifest(m, wide); err != nil {
			return fp, fmt.Errorf("%s setup: %w", inst.ID, err)
		}
	}
	for _, f := range inst.Faults {
		kind, _ := f.Kind()
		switch {
		case f.Apply != nil:
			if err := fp.addManifest(f.Apply.Manifest, wide); err != nil {
				return fp, fmt.Errorf("%s fault: %w", inst.ID, err)
			}
		case f.Patch != nil:
			fp.addRef(f.Patch.Object, wide)
		case f.Delete != nil:
			fp.addRef(f.Delete.ObjectRef, wide)
		case f.Scale != nil:
			fp.addRef(f.Scale.Object, wide)
		case f.Webhook != nil:
			fp.add(f.Webhook.Namespace)
			wide("a " + kind + " fault")
		default:
			fp.Nodes = append(fp.Nodes, faultNode(f)...)
			wide("a " + kind + " fault")
		}
	}
	slices.Sort(fp.Namespaces)
	fp.Namespaces = slices.Compact(fp.Namespaces)
	return fp, nil
}

// faultNode is the node a node fault changes.
func faultNode(f scenarios.Fault) []string {
	switch {
	case f.Taint != nil:
		return []string{f.Taint.Node}
	case f.Label != nil:
		return []string{f.Label.Node}
	case f.Cordon != nil:
		return []string{f.Cordon.Node}
	case f.NodeFile != nil:
		return []string{f.NodeFile.Node}
	case f.NodeService != nil:
		return []string{f.NodeService.Node}
	}
	return nil
}

func (fp *Footprint) add(ns string) {
	if ns != "" {
		fp.Namespaces = append(fp.Namespaces, ns)
	}
}

func (fp *Footprint) addRef(r scenarios.ObjectRef, wide func(string)) {
	if r.Namespace == "" {
		wide(fmt.Sprintf("cluster-scoped %s", r))
		return
	}
	fp.add(r.Namespace)
}

// addManifest counts a Namespace object as the namespace it creates (the collision check keeps it to one
// question); any other object without a namespace is cluster-scoped.
func (fp *Footprint) addManifest(m string, wide func(string)) error {
	objs, err := manifest.Decode([]byte(m))
	if err != nil {
		return err
	}
	for _, o := range objs {
		switch {
		case o.GetKind() == "Namespace" && o.GetAPIVersion() == "v1":
			fp.add(o.GetName())
		case o.GetNamespace() == "":
			wide(fmt.Sprintf("cluster-scoped %s/%s", o.GetKind(), o.GetName()))
		default:
			fp.add(o.GetNamespace())
		}
	}
	return nil
}

// Collides returns a namespace both footprints use, "" when none.
func (fp Footprint) Collides(other Footprint) string {
	for _, ns := range fp.Namespaces {
		if slices.Contains(other.Namespaces, ns) {
			return ns
		}
	}
	return ""
}
