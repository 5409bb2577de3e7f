package scenarios

import (
	"fmt"
	"reflect"
	"strings"
)

// Kind is one kind of check or fault: the type of its field in Check or Fault. It says what the check reads or
// the fault changes, and what its fields must hold; the grader evaluates and the injector injects each kind
// by its type, so every other part of lab reads these answers instead of knowing the kinds.
//
// Adding a kind: its type here (with these methods) and a pointer field of it in Check or Fault, named by its
// YAML key; its evaluator in grader's evaluators or its injector in injector's injectors; a line in
// scenarios/README.md.
type Kind interface {
	// Touches is what the check reads or the fault changes, as far as its fields tell.
	Touches() Footprint
	// Validate reports what its fields lack beyond the schema.
	Validate() []Problem
}

// Footprint is what a check reads or a fault changes: grading waits for it to converge, lint wants what a
// check needs created by the scenario, coaching counts it involved, survive disturbs it, and the exam drill
// keeps questions that share it apart.
type Footprint struct {
	// Namespaces are where a check reads Pods, events or Services, which the scenario must create; for a
	// fault, where it changes objects it finds at run time (a custom fault's namespace argument).
	Namespaces []string
	// Pods are the Pods a check reads by name or selector, and what it does with them.
	Pods []PodUse
	// Services are the Services a check reaches Pods through.
	Services []ServiceRef
	// Objects are what a check reads or a fault writes, by name.
	Objects []ObjectUse
	// Nodes are what it reads or changes on nodes; a Name "" is every node.
	Nodes []NodeUse
	// Watches are namespaces a check finds what it reads in at run time, as its arguments say (a custom
	// check): grading waits for what runs there, though the scenario need not create them.
	Watches []string
	// Subjects are the users, groups and ServiceAccounts whose permissions a check judges.
	Subjects []SubjectUse
	// System says it reads or changes kube-system's own objects, found at run time (the CNI's DaemonSet).
	System bool
	// ClusterWide says a fault changes what every namespace sees beyond the objects it names (a node, the
	// admission of every request); Opaque that lab cannot see what it changes beyond its arguments.
	ClusterWide, Opaque bool
	// Err says why lab could not read what a fault changes (a manifest that does not decode, which Validate
	// reports): nothing else is set then.
	Err error
}

// Access is what a check does with the Pods it reads.
type Access string

// How a check reads Pods: their state (phase, readiness), a command run in them (the learner's vantage
// point), or their logs.
const (
	AccessState Access = "state"
	AccessExec  Access = "exec"
	AccessLogs  Access = "logs"
)

// PodUse is Pods a check reads, and how.
type PodUse struct {
	PodSelector
	Access Access
}

// ServiceRef names a Service.
type ServiceRef struct {
	Namespace, Name string
}

// ObjectUse is an object a check reads or a fault writes.
type ObjectUse struct {
	ObjectRef
	// Exists says a check needs the object to exist, so the scenario must create it; for a fault, that the
	// object exists once it is in, made or patched by it, so checks may read it.
	Exists bool
	// Created says a fault creates the object: a Namespace it creates is its own.
	Created bool
	// Workload says a check reads the Pods the object runs, or their template: replacing them may undo a fix.
	Workload bool
}

// NodeUse is what a check reads or a fault changes on a node.
type NodeUse struct {
	Name string
	// Inside says it reads or changes the node's own state (its kubelet, files, units), not only its object.
	Inside bool
	// Object says a fault changes the Node object (taints, labels, unschedulable).
	Object bool
	// Files and Units are what it reads or changes there; Component is the static Pod whose manifest it
	// changes, Sysctl the kernel parameters it sets.
	Files, Units []string
	Component    string
	Sysctl       []string
}

// SubjectUse is a subject whose permissions a check judges: a user or "system:serviceaccount:NS:NAME", with
// its groups, and the namespace it is asked about ("" for cluster-wide). Grants says the check wants a
// permission granted (a fix may write RBAC for it); without it the subject must stay refused, and a binding
// that gives it more is no part of the task.
type SubjectUse struct {
	Name      string
	Groups    []string
	Namespace string
	Grants    bool
}

// Problem is one thing a kind's fields lack.
type Problem struct {
	// Field is the field it is about, below the kind ("": the kind itself).
	Field string
	// AtField places it at the field's own line (a manifest) rather than at the check's or fault's.
	AtField bool
	Msg     string
}

func problem(field, format string, args ...any) Problem {
	return Problem{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// kindField is one pointer field of Check or Fault: a kind, named by its YAML key.
type kindField struct {
	name  string
	index int
}

var (
	checkFields = kindFields(reflect.TypeFor[Check]())
	faultFields = kindFields(reflect.TypeFor[Fault]())
)

// kindFields lists the kinds of Check or Fault: every pointer field is one, so a field is all a new kind
// needs to be known. A field whose type is not a Kind is a programming error caught at start.
func kindFields(t reflect.Type) []kindField {
	var out []kindField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Kind() != reflect.Pointer {
			continue
		}
		if !f.Type.Implements(reflect.TypeFor[Kind]()) {
			panic(fmt.Sprintf("scenarios.%s.%s: %s does not implement scenarios.Kind", t.Name(), f.Name, f.Type))
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		out = append(out, kindField{name, i})
	}
	return out
}

// namedKind is a kind that is set, with its name.
type namedKind struct {
	name string
	kind Kind
}

// setKinds returns the kinds set in v, a Check or Fault, in field order.
func setKinds(v reflect.Value, fields []kindField) []namedKind {
	var out []namedKind
	for _, f := range fields {
		if p := v.Field(f.index); !p.IsNil() {
			out = append(out, namedKind{f.name, p.Interface().(Kind)})
		}
	}
	return out
}

// zeroKinds returns a zero value of every kind of fields' struct, by name.
func zeroKinds(t reflect.Type, fields []kindField) map[string]Kind {
	out := map[string]Kind{}
	for _, f := range fields {
		out[f.name] = reflect.New(t.Field(f.index).Type.Elem()).Interface().(Kind)
	}
	return out
}

// CheckKinds returns a zero value of every check kind by name: what the grader must evaluate.
func CheckKinds() map[string]Kind { return zeroKinds(reflect.TypeFor[Check](), checkFields) }

// FaultKinds returns a zero value of every fault kind by name: what the injector must inject.
func FaultKinds() map[string]Kind { return zeroKinds(reflect.TypeFor[Fault](), faultFields) }

// faultKindNames are the fault kinds' names in field order, for the learner who set none or several.
func faultKindNames() []string {
	names := make([]string, len(faultFields))
	for i, f := range faultFields {
		names[i] = f.name
	}
	return names
}

func (c *Check) kinds() []namedKind { return setKinds(reflect.ValueOf(c).Elem(), checkFields) }

func (f *Fault) kinds() []namedKind { return setKinds(reflect.ValueOf(f).Elem(), faultFields) }

// Spec returns the check's kind, nil when none is set (the first when several are: Validate refuses that).
func (c *Check) Spec() Kind { return first(c.kinds()) }

// Spec returns the fault's kind, nil when none is set (the first when several are: Validate refuses that).
func (f *Fault) Spec() Kind { return first(f.kinds()) }

// Kind returns the name of the check kind that is set, "" when none is, and how many are set.
func (c *Check) Kind() (string, int) { return nameAndCount(c.kinds()) }

// Kind returns the name of the fault kind that is set and how many are set.
func (f *Fault) Kind() (string, int) { return nameAndCount(f.kinds()) }

// Touches is what the check reads; nothing when it has no kind.
func (c *Check) Touches() Footprint { return touches(c.Spec()) }

// Touches is what the fault changes; nothing when it has no kind.
func (f *Fault) Touches() Footprint { return touches(f.Spec()) }

func first(ks []namedKind) Kind {
	if len(ks) == 0 {
		return nil
	}
	return ks[0].kind
}

func nameAndCount(ks []namedKind) (string, int) {
	if len(ks) == 0 {
		return "", 0
	}
	return ks[len(ks)-1].name, len(ks)
}

func touches(k Kind) Footprint {
	if k == nil {
		return Footprint{}
	}
	return k.Touches()
}
