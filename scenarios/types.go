// Package scenarios defines lab's scenarios: one YAML file per scenario (data first), loaded strictly, validated
// with file:line for every problem, and instantiated for a seed so names and values vary between attempts.
package scenarios

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cka-lab/lab/internal/journey"
)

// Scenario is one exam-style task: a cluster broken at one stage of a Pod's journey, and how to grade its fix.
type Scenario struct {
	ID         string        `yaml:"id"`
	Title      string        `yaml:"title"`
	Stage      journey.Stage `yaml:"stage"`
	Difficulty string        `yaml:"difficulty"`
	// Competency is the CKA curriculum domain the scenario trains (one of Competencies).
	Competency string `yaml:"competency"`
	// Component is the add-on or tool beyond a bare cluster the scenario trains (one of Components), if any.
	Component string   `yaml:"component"`
	Weight    int      `yaml:"weight"`
	TimeLimit Duration `yaml:"timeLimit"`
	// Images are workload images the scenario's Pods use; lab preloads them into every node.
	Images []string        `yaml:"images"`
	Vars   map[string]*Var `yaml:"vars"`
	// Task is the question as the exam words it: where, and what must be true when done.
	Task  string   `yaml:"task"`
	Setup []string `yaml:"setup"`
	// Faults break the cluster after setup, each recorded so reset restores exactly what it touched.
	Faults []Fault `yaml:"faults"`
	// Symptom must be observable after the faults, the way the exam shows it, before the task is shown.
	Symptom []Check  `yaml:"symptom"`
	Hints   []string `yaml:"hints"`
	Checks  []Check  `yaml:"checks"`
	// Collateral checks fail fixes that are over-broad or that remove the thing the task protects.
	Collateral []Check `yaml:"collateral"`
	// Builds are the objects a build task asks the learner to create or extend: checks may read them although the
	// setup and faults never create them, and `lab list` tells build tasks from repairs by them.
	Builds []ObjectRef `yaml:"builds"`
	// BuildFiles are the files on nodes a build task asks for where it creates no API object (a backup).
	BuildFiles  []NodeFileRef `yaml:"buildFiles"`
	Diagnosis   Diagnosis     `yaml:"diagnosis"`
	Explanation string        `yaml:"explanation"`
	Solution    []string      `yaml:"solution"`
	WrongFixes  []WrongFix    `yaml:"wrongFixes"`
	// AltFixes are other correct fixes a competent candidate makes (imperative where the solution edits, the
	// other side of a mismatch, a different valid object): applied by the e2e suite, each must pass.
	AltFixes []AltFix `yaml:"altFixes"`
	// MayChange lists what else a correct fix may change, beyond what the checks, faults and builds name (the
	// task's Scope), each with why; any other net change fails the check.
	MayChange []MayChange `yaml:"mayChange"`
	// Settle bounds how long `lab check` waits for the cluster to converge after a fix (default 40s).
	Settle Duration `yaml:"settle"`
	// SymptomTimeout bounds how long `lab start` waits for the symptom (default 90s).
	SymptomTimeout Duration `yaml:"symptomTimeout"`

	// File and Source are where the scenario came from, for error positions and instantiation.
	File   string     `yaml:"-"`
	Source []byte     `yaml:"-"`
	root   *yaml.Node `yaml:"-"`
}

// NodeFileRef names a file on a node.
type NodeFileRef struct {
	Node string `yaml:"node"`
	Path string `yaml:"path"`
}

// Kind is "build" for a task that asks the learner to create something, "repair" for a fault to fix.
func (s *Scenario) Kind() string {
	if len(s.Builds) > 0 || len(s.BuildFiles) > 0 {
		return "build"
	}
	return "repair"
}

// Diagnosis is the answer to `lab diagnose`: the stage where the Pod stopped and the object that blocks it.
type Diagnosis struct {
	Object string `yaml:"object"`
}

// WrongFix is a tempting fix that must not pass: applied by the e2e suite, it must make `lab check` fail.
type WrongFix struct {
	Name string   `yaml:"name"`
	Why  string   `yaml:"why"`
	Run  []string `yaml:"run"`
}

// AltFix is a correct fix made another way than the reference solution.
type AltFix struct {
	Name string   `yaml:"name"`
	Run  []string `yaml:"run"`
}

// Var is a value chosen per attempt from the seed; exactly one source is set.
type Var struct {
	// Pick chooses one of the values.
	Pick []string `yaml:"pick"`
	// Node chooses a node of a role: "worker" or "control-plane".
	Node string `yaml:"node"`
	// CNIConfig is the active CNI config file on the node named by this var; CNIPlugin the plugin binary that
	// config's first plugin runs. Found on the node, so scenarios do not depend on which CNI the image ships.
	CNIConfig string `yaml:"cniConfig"`
	CNIPlugin string `yaml:"cniPlugin"`
}

// ObjectRef names one API object.
type ObjectRef struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Namespace  string `yaml:"namespace"`
	Name       string `yaml:"name"`
}

func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return fmt.Sprintf("%s/%s", r.Kind, r.Name)
	}
	return fmt.Sprintf("%s/%s -n %s", r.Kind, r.Name, r.Namespace)
}

// Duration is a time.Duration written like "90s" or "8m".
type Duration struct{ time.Duration }

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: invalid duration %q (use e.g. 90s or 8m)", n.Line, s)
	}
	d.Duration = v
	return nil
}

// MarshalYAML writes the duration back as a string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }
