package scenarios

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Resolver answers what a var needs from the cluster it will run on.
type Resolver interface {
	// Nodes lists node names of a role ("worker", "control-plane"), sorted.
	Nodes(role string) ([]string, error)
	// CNIConfig returns the path of the active CNI config on a node; CNIPlugin the binary its first plugin runs.
	CNIConfig(node string) (string, error)
	CNIPlugin(node string) (string, error)
	// Builtin returns the value of a builtin variable other than seed.
	Builtin(name string) string
}

// Instance is a scenario with every ${var} replaced by the value chosen for one seed.
type Instance struct {
	*Scenario
	Seed   int64             `json:"seed"`
	Values map[string]string `json:"values"`
}

// Instantiate chooses every var for seed (the same seed gives the same values on every machine) and substitutes
// them. Vars that read the cluster come last, after the node vars they name.
func (s *Scenario) Instantiate(seed int64, r Resolver) (*Instance, error) {
	values, err := s.Choose(seed, r)
	if err != nil {
		return nil, err
	}
	return s.WithValues(seed, values)
}

// Choose returns the value of every var (and builtin) for seed.
func (s *Scenario) Choose(seed int64, r Resolver) (map[string]string, error) {
	h := fnv.New64a()
	h.Write([]byte(s.ID))
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	values := map[string]string{"seed": strconv.FormatInt(seed, 10)}
	for _, b := range Builtins {
		if b != "seed" {
			values[b] = r.Builtin(b)
		}
	}
	names := slices.Sorted(maps.Keys(s.Vars))
	for _, name := range names {
		v := s.Vars[name]
		switch {
		case len(v.Pick) > 0:
			values[name] = v.Pick[rng.IntN(len(v.Pick))]
		case v.Node != "":
			ns, err := r.Nodes(v.Node)
			if err != nil {
				return nil, fmt.Errorf("var %s: %w", name, err)
			}
			if len(ns) == 0 {
				return nil, fmt.Errorf("var %s: the cluster has no %s node (create it with --workers 1 or more)", name, v.Node)
			}
			values[name] = ns[rng.IntN(len(ns))]
		}
	}
	for _, name := range names {
		v := s.Vars[name]
		var err error
		switch {
		case v.CNIConfig != "":
			values[name], err = r.CNIConfig(values[v.CNIConfig])
		case v.CNIPlugin != "":
			values[name], err = r.CNIPlugin(values[v.CNIPlugin])
		}
		if err != nil {
			return nil, fmt.Errorf("var %s: %w", name, err)
		}
	}
	return values, nil
}

// WithValues substitutes values into the scenario's source and parses it again, so positions stay those of
// the file and the instance is as strictly checked as the file itself.
func (s *Scenario) WithValues(seed int64, values map[string]string) (*Instance, error) {
	text := varPattern.ReplaceAllStringFunc(string(s.Source), func(m string) string {
		if v, ok := values[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
	if left := varPattern.FindString(text); left != "" {
		return nil, fmt.Errorf("instantiate %s: %s has no value", s.ID, left)
	}
	inst, err := decode(s.File, []byte(text))
	if err != nil {
		return nil, fmt.Errorf("instantiate %s: %w", s.ID, err)
	}
	return &Instance{Scenario: inst, Seed: seed, Values: values}, nil
}
