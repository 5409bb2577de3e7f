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
		touched := f.Touches()
		if touched.Err != nil {
			return fp, fmt.Errorf("%s fault: %w", inst.ID, touched.Err)
		}
		if touched.ClusterWide || touched.Opaque {
			wide("a " + kind + " fault")
		}
		if touched.Opaque {
			// What lab cannot see into counts as cluster-wide, and as nothing more.
			continue
		}
		for _, o := range touched.Objects {
			fp.addObject(o, wide)
		}
		for _, n := range touched.Nodes {
			fp.Nodes = append(fp.Nodes, n.Name)
		}
	}
	slices.Sort(fp.Namespaces)
	fp.Namespaces = slices.Compact(fp.Namespaces)
	return fp, nil
}

func (fp *Footprint) add(ns string) {
	if ns != "" {
		fp.Namespaces = append(fp.Namespaces, ns)
	}
}

// addObject counts a Namespace the instance creates as the namespace it is (the collision check keeps it to
// one question); any other object without a namespace is cluster-scoped.
func (fp *Footprint) addObject(o scenarios.ObjectUse, wide func(string)) {
	switch {
	case o.Created && o.Kind == "Namespace" && o.APIVersion == "v1":
		fp.add(o.Name)
	case o.Namespace == "":
		wide("cluster-scoped " + o.String())
	default:
		fp.add(o.Namespace)
	}
}

// addManifest counts the objects of a setup manifest, each created by it.
func (fp *Footprint) addManifest(m string, wide func(string)) error {
	objs, err := manifest.Decode([]byte(m))
	if err != nil {
		return err
	}
	for _, o := range objs {
		ref := scenarios.ObjectRef{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
		fp.addObject(scenarios.ObjectUse{ObjectRef: ref, Created: true}, wide)
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
