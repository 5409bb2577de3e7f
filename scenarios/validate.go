package scenarios

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/cka-lab/lab/internal/manifest"

	"gopkg.in/yaml.v3"

	"github.com/cka-lab/lab/internal/journey"
)

var (
	idPattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{2,62}$`)
	varPattern = regexp.MustCompile(`\$\{([A-Za-z][A-Za-z0-9_]*)\}`)
	// Var values are substituted into YAML text, so they stay plain tokens.
	valuePattern = regexp.MustCompile(`^[A-Za-z0-9._:/@-]+$`)
	// A component's name is also its process name in a shell pattern on the node.
	componentName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
)

// Builtins are variables every scenario may use without declaring them.
var Builtins = []string{"cluster", "controlPlane", "seed"}

// Competency is a domain of the CKA curriculum (v1.35, from February 2025), with its weight in the exam.
type Competency struct {
	ID, Title string
	Weight    int
}

// Competencies are the curriculum's domains, heaviest first.
var Competencies = []Competency{
	{"troubleshooting", "Troubleshooting", 30},
	{"architecture", "Cluster Architecture, Installation and Configuration", 25},
	{"networking", "Services and Networking", 20},
	{"workloads", "Workloads and Scheduling", 15},
	{"storage", "Storage", 10},
}

// Component is an add-on or tool of the 2025 curriculum that a bare kind cluster lacks.
type Component struct{ ID, Title string }

// Components are the curriculum's components, each a row of the README's coverage table.
var Components = []Component{
	{"helm", "Helm"},
	{"kustomize", "Kustomize"},
	{"crd-operator", "CRDs and operators"},
	{"autoscaling", "Autoscaling (metrics-server, HPA)"},
	{"gateway-api", "Gateway API"},
	{"ingress", "Ingress"},
}

func componentIDs() []string {
	ids := make([]string, len(Components))
	for i, c := range Components {
		ids[i] = c.ID
	}
	return ids
}

func competencyIDs() []string {
	ids := make([]string, len(Competencies))
	for i, c := range Competencies {
		ids[i] = c.ID
	}
	return ids
}

// Difficulties, from a warm-up to a hard exam question.
var Difficulties = []string{"easy", "medium", "hard"}

type validator struct {
	s    *Scenario
	errs Errors
}

func (v *validator) add(field string, path []any, format string, args ...any) {
	v.errs = append(v.errs, Error{File: v.s.File, Line: v.s.line(path...), Field: field, Msg: fmt.Sprintf(format, args...)})
}

// Validate checks meaning beyond the schema; every problem carries file:line and the field.
func (s *Scenario) Validate() Errors {
	v := &validator{s: s}
	v.header()
	v.vars()
	v.manifests()
	v.faults()
	v.checks("symptom", s.Symptom, 1, false)
	v.checks("checks", s.Checks, 1, true)
	v.checks("collateral", s.Collateral, 1, true)
	// The grade matches outcomes to checks by name: a collateral check named like a task check would be
	// reported with the other's result.
	for i, c := range s.Collateral {
		if slices.ContainsFunc(s.Checks, func(t Check) bool { return t.Name == c.Name }) {
			v.add("collateral.name", []any{"collateral", i}, "check name %q is also a task check's: names must differ across checks and collateral", c.Name)
		}
	}
	for i, m := range s.MayChange {
		for _, msg := range m.validate() {
			v.add("mayChange", []any{"mayChange", i}, "%s", msg)
		}
	}
	v.learnerText()
	v.references()
	sort.SliceStable(v.errs, func(i, j int) bool { return v.errs[i].Line < v.errs[j].Line })
	return v.errs
}

func (v *validator) header() {
	s := v.s
	if !idPattern.MatchString(s.ID) {
		v.add("id", []any{"id"}, "must be 3-63 lowercase letters, digits and dashes, got %q", s.ID)
	} else if base := strings.TrimSuffix(filepath.Base(s.File), filepath.Ext(s.File)); base != s.ID && s.File != "" && !strings.HasPrefix(base, "fuzz") {
		v.add("id", []any{"id"}, "must match the file name %q", base)
	}
	if strings.TrimSpace(s.Title) == "" {
		v.add("title", []any{"title"}, "is required")
	}
	if st, err := journey.ParseStage(string(s.Stage)); err != nil {
		v.add("stage", []any{"stage"}, "%v", err)
	} else if st != s.Stage {
		v.add("stage", []any{"stage"}, "write the canonical stage name %q", st)
	}
	if s.Component != "" && !slices.Contains(componentIDs(), s.Component) {
		v.add("component", []any{"component"}, "must be one of %s, or left out, got %q", strings.Join(componentIDs(), ", "), s.Component)
	}
	if !slices.Contains(competencyIDs(), s.Competency) {
		v.add("competency", []any{"competency"}, "must be one of %s (the CKA curriculum's domains), got %q", strings.Join(competencyIDs(), ", "), s.Competency)
	}
	if !slices.Contains(Difficulties, s.Difficulty) {
		v.add("difficulty", []any{"difficulty"}, "must be one of %s, got %q", strings.Join(Difficulties, ", "), s.Difficulty)
	}
	if s.Weight < 1 || s.Weight > 20 {
		v.add("weight", []any{"weight"}, "must be 1 to 20 (percent of an exam, like the CKA's), got %d", s.Weight)
	}
	if s.TimeLimit.Duration <= 0 || s.TimeLimit.Minutes() > 60 {
		v.add("timeLimit", []any{"timeLimit"}, "must be between 1s and 60m, got %s", s.TimeLimit.Duration)
	}
	for i, img := range s.Images {
		if !valuePattern.MatchString(img) {
			v.add("images", []any{"images", i}, "invalid image reference %q", img)
		}
	}
}

func (v *validator) vars() {
	for _, name := range slices.Sorted(maps.Keys(v.s.Vars)) {
		vr := v.s.Vars[name]
		path := []any{"vars", name}
		if vr == nil {
			v.add("vars."+name, path, "needs one of pick, node, cniConfig, cniPlugin")
			continue
		}
		n := 0
		for _, set := range []bool{len(vr.Pick) > 0, vr.Node != "", vr.CNIConfig != "", vr.CNIPlugin != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			v.add("vars."+name, path, "needs exactly one of pick, node, cniConfig, cniPlugin")
		}
		for _, val := range vr.Pick {
			if !valuePattern.MatchString(val) {
				v.add("vars."+name+".pick", path, "value %q must be a plain token (letters, digits, . _ : / @ -)", val)
			}
		}
		if vr.Node != "" && vr.Node != "worker" && vr.Node != "control-plane" {
			v.add("vars."+name+".node", path, "must be worker or control-plane, got %q", vr.Node)
		}
		for _, ref := range []string{vr.CNIConfig, vr.CNIPlugin} {
			if ref == "" {
				continue
			}
			if dep, ok := v.s.Vars[ref]; !ok || dep == nil || dep.Node == "" {
				v.add("vars."+name, path, "must name a node var, got %q", ref)
			}
		}
	}
}

// manifests checks every manifest decodes into objects with kind and name, with vars standing in as text: the
// setup's, then each kind's problems found at a field's own line (a fault's or a check's manifest).
func (v *validator) manifests() {
	for i, m := range v.s.Setup {
		for _, p := range manifestProblems(m) {
			v.add("setup", []any{"setup", i}, "%s", p.Msg)
		}
	}
	for i := range v.s.Faults {
		for _, k := range v.s.Faults[i].kinds() {
			v.problems("faults", []any{"faults", i, k.name}, k, true)
		}
	}
	for _, group := range []struct {
		name   string
		checks []Check
	}{{"symptom", v.s.Symptom}, {"checks", v.s.Checks}, {"collateral", v.s.Collateral}} {
		for i := range group.checks {
			for _, k := range group.checks[i].kinds() {
				v.problems(group.name, []any{group.name, i, k.name}, k, true)
			}
		}
	}
}

// problems adds either the kind's problems found at a field's own line (atField: at that field below path,
// the kind's), or the others (at path: the kind's for a fault, the check's for a check).
func (v *validator) problems(group string, path []any, k namedKind, atField bool) {
	for _, p := range k.kind.Validate() {
		if p.AtField != atField {
			continue
		}
		field, at := group+"."+k.name, path
		if p.Field != "" {
			field += "." + p.Field
		}
		if p.AtField {
			at = append(slices.Clone(path), p.Field)
		}
		v.add(field, at, "%s", p.Msg)
	}
}

// manifestProblems are what a manifest lacks to decode into objects with kind and name.
func manifestProblems(text string) []Problem {
	objs, err := manifest.Decode([]byte(text))
	if err != nil {
		return []Problem{{Field: "manifest", AtField: true, Msg: err.Error()}}
	}
	var out []Problem
	if len(objs) == 0 {
		out = append(out, Problem{Field: "manifest", AtField: true, Msg: "manifest has no objects"})
	}
	for _, o := range objs {
		if o.GetName() == "" {
			out = append(out, Problem{Field: "manifest", AtField: true, Msg: fmt.Sprintf("a %s has no metadata.name", o.GetKind())})
		}
	}
	return out
}

func (v *validator) faults() {
	if len(v.s.Faults) == 0 && len(v.s.Builds) == 0 && len(v.s.BuildFiles) == 0 {
		v.add("faults", []any{"faults"}, "a scenario needs at least one fault, or a build task the objects it builds")
	}
	for i, f := range v.s.Faults {
		path := []any{"faults", i}
		kind, n := f.Kind()
		if n != 1 {
			v.add("faults", path, "each fault needs exactly one kind (%s), got %d", strings.Join(faultKindNames(), ", "), n)
			continue
		}
		v.problems("faults", append(path, kind), f.kinds()[0], false)
	}
}

func (v *validator) checks(group string, checks []Check, min int, scored bool) {
	if len(checks) < min {
		v.add(group, []any{group}, "needs at least %d check(s)", min)
	}
	names := map[string]bool{}
	for i, c := range checks {
		path := []any{group, i}
		if strings.TrimSpace(c.Name) == "" {
			v.add(group+".name", path, "every check needs a name (it is what the learner reads)")
		}
		if names[c.Name] {
			v.add(group+".name", path, "duplicate check name %q", c.Name)
		}
		names[c.Name] = true
		if _, n := c.Kind(); n != 1 {
			v.add(group, path, "each check needs exactly one kind, got %d", n)
		}
		if scored && c.Points < 1 {
			v.add(group+".points", path, "must be at least 1")
		}
		for _, k := range c.kinds() {
			v.problems(group, path, k, false)
		}
	}
}

func (v *validator) learnerText() {
	s := v.s
	if strings.TrimSpace(s.Task) == "" {
		v.add("task", []any{"task"}, "is required: the question as the exam would ask it")
	}
	if len(s.Hints) == 0 {
		v.add("hints", []any{"hints"}, "give at least one hint")
	}
	if len(s.Solution) == 0 {
		v.add("solution", []any{"solution"}, "every scenario ships a reference solution")
	}
	if len(s.WrongFixes) == 0 {
		v.add("wrongFixes", []any{"wrongFixes"}, "every scenario ships at least one wrong fix")
	}
	for i, w := range s.WrongFixes {
		if w.Name == "" || len(w.Run) == 0 || w.Why == "" {
			v.add("wrongFixes", []any{"wrongFixes", i}, "needs name, why and run")
		}
	}
	for i, b := range s.Builds {
		if b.Kind == "" || b.Name == "" {
			v.add("builds", []any{"builds", i}, "name the object the learner creates: kind and name (and namespace)")
		}
	}
	for i, f := range s.BuildFiles {
		if f.Node == "" || !strings.HasPrefix(f.Path, "/") {
			v.add("buildFiles", []any{"buildFiles", i}, "name the file the learner creates: node and absolute path")
		}
	}
	if len(s.AltFixes) < 2 {
		v.add("altFixes", []any{"altFixes"}, "give at least two correct fixes made another way than the solution (e2e proves each passes)")
	}
	for i, a := range s.AltFixes {
		if a.Name == "" || len(a.Run) == 0 {
			v.add("altFixes", []any{"altFixes", i}, "needs name and run")
		}
	}
	if strings.TrimSpace(s.Explanation) == "" {
		v.add("explanation", []any{"explanation"}, "say which handoff failed and why the fix is the right one")
	}
}

// references checks every ${var} names a declared or builtin variable.
func (v *validator) references() {
	declared := map[string]bool{}
	for _, b := range Builtins {
		declared[b] = true
	}
	for name := range v.s.Vars {
		declared[name] = true
	}
	if v.s.root == nil {
		return
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			for _, m := range varPattern.FindAllStringSubmatchIndex(n.Value, -1) {
				name := n.Value[m[2]:m[3]]
				if !declared[name] {
					v.errs = append(v.errs, Error{File: v.s.File, Line: scalarLine(n, m[0]), Field: "${" + name + "}", Msg: "undeclared variable (declare it under vars, or use " + strings.Join(Builtins, ", ") + ")"})
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(v.s.root)
}

// scalarLine is the line of byte offset off inside a scalar; block scalars start on the line after their indicator.
func scalarLine(n *yaml.Node, off int) int {
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return n.Line + 1 + strings.Count(n.Value[:off], "\n")
	}
	return n.Line
}
