package exam

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/cka-lab/lab/internal/manifest"
	"github.com/cka-lab/lab/scenarios"
)

// Nodeless resolves vars where lab reaches no node: a learner's namespace on a shared cluster, or the
// instructor's machine checking a class plan. A scenario that needs a node is not namespace-scoped.
type Nodeless struct{}

var errNoNodes = errors.New("lab reaches no node from a learner's namespace")

// Nodes refuses: a namespace-scoped scenario names no node.
func (Nodeless) Nodes(string) ([]string, error) { return nil, errNoNodes }

// CNIConfig refuses: a namespace-scoped scenario reads no node file.
func (Nodeless) CNIConfig(string) (string, error) { return "", errNoNodes }

// CNIPlugin refuses: a namespace-scoped scenario reads no node file.
func (Nodeless) CNIPlugin(string) (string, error) { return "", errNoNodes }

// Builtin answers nothing: the builtins name the cluster and its nodes.
func (Nodeless) Builtin(string) string { return "" }

// RefusedError is a scenario Confine refuses, and why: the instructor's fix is to drop it from the class.
type RefusedError struct {
	Scenario string
	Reason   string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("scenario %s cannot run in a namespace of a shared cluster: %s", e.Scenario, e.Reason)
}

// Confine instantiates sc for seed inside namespace ns of a cluster lab does not own (a workshop's shared
// cluster, where each learner has one namespace): the var that names the scenario's only namespace is bound
// to ns, and the Namespace object is left out of the manifests (ns exists and is not the learner's to create).
// A scenario that changes anything outside that one namespace is refused, with the reason.
func Confine(sc *scenarios.Scenario, seed int64, r scenarios.Resolver, ns string) (*scenarios.Instance, error) {
	refuse := func(why string) error { return &RefusedError{Scenario: sc.ID, Reason: why} }
	values, err := sc.Choose(seed, r)
	if err != nil {
		return nil, refuse(err.Error())
	}
	inst, err := sc.WithValues(seed, values)
	if err != nil {
		return nil, err
	}
	fp, err := FootprintOf(inst)
	switch {
	case err != nil:
		return nil, err
	case fp.ClusterWide:
		return nil, refuse("it reaches beyond its namespace (" + fp.Why + ")")
	case len(fp.Namespaces) != 1:
		return nil, refuse(fmt.Sprintf("it uses %d namespaces (%s), not one", len(fp.Namespaces), strings.Join(fp.Namespaces, ", ")))
	}
	if inst, err = bindNamespace(sc, seed, values, fp.Namespaces[0], ns); err != nil {
		return nil, err
	}
	return inst, withoutNamespace(inst, ns)
}

// bindNamespace rebinds the var that names the scenario's namespace (value was) to ns. Another var may have
// the same value (a Deployment named like its namespace), so each var with that value is tried, in name order,
// and the first that moves everything into ns wins.
func bindNamespace(sc *scenarios.Scenario, seed int64, values map[string]string, was, ns string) (*scenarios.Instance, error) {
	var reach []string
	for _, name := range slices.Sorted(maps.Keys(sc.Vars)) {
		if values[name] != was {
			continue
		}
		bound := maps.Clone(values)
		bound[name] = ns
		inst, err := sc.WithValues(seed, bound)
		if err != nil {
			return nil, err
		}
		fp, err := FootprintOf(inst)
		if err != nil {
			return nil, err
		}
		if !fp.ClusterWide && slices.Equal(fp.Namespaces, []string{ns}) {
			return inst, nil
		}
		reach = fp.Namespaces
	}
	if reach == nil {
		return nil, &RefusedError{Scenario: sc.ID, Reason: fmt.Sprintf("its namespace %s is fixed, not a var lab can bind", was)}
	}
	return nil, &RefusedError{Scenario: sc.ID, Reason: fmt.Sprintf("with its namespace bound to %s it still reaches %s", ns, strings.Join(reach, ", "))}
}

// withoutNamespace drops the Namespace object ns from the setup and apply manifests.
func withoutNamespace(inst *scenarios.Instance, ns string) error {
	for i, m := range inst.Setup {
		out, err := dropNamespace(m, ns)
		if err != nil {
			return fmt.Errorf("%s setup: %w", inst.ID, err)
		}
		inst.Setup[i] = out
	}
	for _, f := range inst.Faults {
		if f.Apply == nil {
			continue
		}
		out, err := dropNamespace(f.Apply.Manifest, ns)
		if err != nil {
			return fmt.Errorf("%s fault: %w", inst.ID, err)
		}
		f.Apply.Manifest = out
	}
	return nil
}

func dropNamespace(text, ns string) (string, error) {
	objs, err := manifest.Decode([]byte(text))
	if err != nil {
		return "", err
	}
	var docs []string
	for _, o := range objs {
		if o.GetKind() == "Namespace" && o.GetAPIVersion() == "v1" && o.GetName() == ns {
			continue
		}
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return "", fmt.Errorf("encode %s %s: %w", o.GetKind(), manifest.Name(o), err)
		}
		docs = append(docs, string(b))
	}
	return strings.Join(docs, "---\n"), nil
}
