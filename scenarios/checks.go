package scenarios

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Check is one grader assertion over live cluster state; exactly one kind is set. Checks are also used as
// symptoms (what must be true once the fault is in).
//
// Each pointer field is a check kind, named by its YAML key: its type is a Kind (kinds.go says what adding
// one takes).
type Check struct {
	Name   string `yaml:"name"`
	Points int    `yaml:"points"`
	// Decisive marks a check that only the learner can turn, never the cluster converging (a line in a
	// file on a node): once it has failed a few rounds in a row, grading stops waiting for the others.
	Decisive bool `yaml:"decisive"`

	PodsReady *PodsReady   `yaml:"podsReady"`
	PodState  *PodState    `yaml:"podState"`
	Event     *EventCheck  `yaml:"event"`
	CanI      *CanI        `yaml:"canI"`
	Field     *FieldCheck  `yaml:"field"`
	Exists    *ExistsCheck `yaml:"exists"`
	Absent    *AbsentCheck `yaml:"absent"`
	// SameObject passes while the object is the one the task started with: created before the task was
	// shown, not deleted and recreated since.
	SameObject      *SameObjectCheck `yaml:"sameObject"`
	Admission       *AdmissionCheck  `yaml:"admission"`
	Endpoints       *EndpointsCheck  `yaml:"endpoints"`
	HTTP            *HTTPCheck       `yaml:"http"`
	NodeTaint       *NodeTaintCheck  `yaml:"nodeTaint"`
	NodeReady       *NodeReadyCheck  `yaml:"nodeReady"`
	NotClusterAdmin *SubjectCheck    `yaml:"notClusterAdmin"`
	Grants          *GrantsCheck     `yaml:"grants"`
	NodeFile        *NodeFileCheck   `yaml:"nodeFile"`
	RunningFlag     *RunningFlag     `yaml:"runningFlag"`
	KubeletConfig   *KubeletConfig   `yaml:"kubeletConfig"`
	Tolerates       *TolerationCheck `yaml:"tolerates"`
	Container       *ContainerCheck  `yaml:"container"`
	NodeExec        *NodeExecCheck   `yaml:"nodeExec"`
	Exec            *ExecCheck       `yaml:"exec"`
	Logs            *LogsCheck       `yaml:"logs"`
	Custom          *CustomCheck     `yaml:"custom"`
	Unchanged       *UnchangedCheck  `yaml:"unchanged"`
}

// PodSelector picks Pods by name or label selector in a namespace.
type PodSelector struct {
	Namespace string `yaml:"namespace"`
	Name      string `yaml:"name"`
	Selector  string `yaml:"selector"`
}

func (s PodSelector) needsNameOrSelector() []Problem {
	if s.Name == "" && s.Selector == "" {
		return []Problem{problem("", "needs name or selector")}
	}
	return nil
}

// pods is the footprint of a check that reads Pods in their namespace.
func (s PodSelector) pods(a Access) Footprint {
	return Footprint{Namespaces: []string{s.Namespace}, Pods: []PodUse{{s, a}}}
}

// PodsReady: at least Count matching Pods are Running and Ready (on Node, when set).
type PodsReady struct {
	PodSelector `yaml:",inline"`
	Count       int    `yaml:"count"`
	Node        string `yaml:"node"`
	// Containers maps container names to the image each must run, compared as the runtime resolves
	// references: a Pod counts only with every one of them. The Pods are what admission made of the
	// template (an injected sidecar), which the workload's own spec does not show.
	Containers map[string]string `yaml:"containers"`
}

func (c *PodsReady) Touches() Footprint  { return c.pods(AccessState) }
func (c *PodsReady) Validate() []Problem { return c.needsNameOrSelector() }

// PodState: some matching Pod is in this state. Reason matches a container's (or init container's) waiting or
// terminated reason, or the Pod's own reason; any of the listed values.
type PodState struct {
	PodSelector `yaml:",inline"`
	Phase       string   `yaml:"phase"`
	Reason      []string `yaml:"reason"`
	Ready       *bool    `yaml:"ready"`
	Scheduled   *bool    `yaml:"scheduled"`
}

func (c *PodState) Touches() Footprint  { return c.pods(AccessState) }
func (c *PodState) Validate() []Problem { return c.needsNameOrSelector() }

// EventCheck: an event with Reason (and Message containing the text) exists about an object whose name starts
// with NamePrefix (Deployment Pods have generated names).
type EventCheck struct {
	Namespace  string `yaml:"namespace"`
	Kind       string `yaml:"kind"`
	NamePrefix string `yaml:"namePrefix"`
	Reason     string `yaml:"reason"`
	Message    string `yaml:"message"`
}

func (c *EventCheck) Touches() Footprint  { return Footprint{Namespaces: []string{c.Namespace}} }
func (c *EventCheck) Validate() []Problem { return nil }

// CanI is `kubectl auth can-i VERB RESOURCE --as AS -n NAMESPACE`, through a SubjectAccessReview.
type CanI struct {
	As          string   `yaml:"as"`
	Groups      []string `yaml:"groups"`
	Verb        string   `yaml:"verb"`
	Resource    string   `yaml:"resource"`
	Group       string   `yaml:"group"`
	Subresource string   `yaml:"subresource"`
	Namespace   string   `yaml:"namespace"`
	Allowed     bool     `yaml:"allowed"`
}

// Touches is the subject it asks about, in its namespace: the bindings that name it decide the answer.
func (c *CanI) Touches() Footprint {
	return Footprint{Subjects: []SubjectUse{{Name: c.As, Groups: c.Groups, Namespace: c.Namespace, Grants: c.Allowed}}}
}
func (c *CanI) Validate() []Problem { return nil }

// FieldCheck reads a JSONPath of a live object and compares it. With no comparison set it checks the path
// yields a value; Absent checks it yields none (or the object is gone).
type FieldCheck struct {
	Object    ObjectRef `yaml:"object"`
	Path      string    `yaml:"path"`
	Equals    *string   `yaml:"equals"`
	NotEquals *string   `yaml:"notEquals"`
	Contains  string    `yaml:"contains"`
	Matches   string    `yaml:"matches"`
	Absent    bool      `yaml:"absent"`
	// Image compares as container image references: docker.io/library/nginx:1.27 is nginx:1.27.
	Image string `yaml:"image"`
	// Quantity compares as a resource quantity in any unit: 200M is within max 256Mi.
	Quantity *QuantityRange `yaml:"quantity"`
}

// Touches reads the object, which must exist unless the check wants the path absent; a node or a cluster
// role the cluster itself owns needs no creator.
func (c *FieldCheck) Touches() Footprint {
	needed := !c.Absent && c.Object.Kind != "Node" && c.Object.Kind != "ClusterRole"
	return Footprint{Objects: []ObjectUse{{ObjectRef: c.Object, Exists: needed, Workload: true}}}
}

func (c *FieldCheck) Validate() []Problem {
	q := c.Quantity
	if q == nil {
		return nil
	}
	var out []Problem
	for _, b := range []string{q.Min, q.Max} {
		if _, err := resource.ParseQuantity(b); b != "" && err != nil {
			out = append(out, problem("quantity", "%q is not a quantity (write e.g. 256Mi or 500m)", b))
		}
	}
	if q.Min == "" && q.Max == "" {
		out = append(out, problem("quantity", "needs min, max or both"))
	}
	return out
}

// QuantityRange bounds a resource quantity; either bound may be empty, both equal for an exact value.
type QuantityRange struct {
	Min string `yaml:"min"`
	Max string `yaml:"max"`
}

// AdmissionCheck creates Manifest with a server-side dry run (as a user, when set) and expects it accepted or
// rejected, with Message in the rejection.
type AdmissionCheck struct {
	Manifest string   `yaml:"manifest"`
	As       string   `yaml:"as"`
	Groups   []string `yaml:"groups"`
	Allowed  bool     `yaml:"allowed"`
	Message  string   `yaml:"message"`
}

func (c *AdmissionCheck) Touches() Footprint  { return Footprint{} }
func (c *AdmissionCheck) Validate() []Problem { return manifestProblems(c.Manifest) }

// EndpointsCheck: the Service has at least Ready ready endpoints (Ready 0 with Exactly checks it has none).
type EndpointsCheck struct {
	Namespace string `yaml:"namespace"`
	Service   string `yaml:"service"`
	Ready     int    `yaml:"ready"`
	Exactly   bool   `yaml:"exactly"`
}

func (c *EndpointsCheck) Touches() Footprint {
	return Footprint{Namespaces: []string{c.Namespace}, Services: []ServiceRef{{c.Namespace, c.Service}}}
}
func (c *EndpointsCheck) Validate() []Problem { return nil }

// HTTPCheck gets Path from a Service through the API server's proxy and expects Contains in the body.
type HTTPCheck struct {
	Namespace string `yaml:"namespace"`
	Service   string `yaml:"service"`
	Port      string `yaml:"port"`
	Path      string `yaml:"path"`
	Contains  string `yaml:"contains"`
}

func (c *HTTPCheck) Touches() Footprint {
	return Footprint{Namespaces: []string{c.Namespace}, Services: []ServiceRef{{c.Namespace, c.Service}}}
}
func (c *HTTPCheck) Validate() []Problem { return nil }

// NodeTaintCheck: the node has (Present) or lacks a taint with this key (and effect, when set).
type NodeTaintCheck struct {
	Node    string `yaml:"node"`
	Key     string `yaml:"key"`
	Effect  string `yaml:"effect"`
	Present bool   `yaml:"present"`
}

func (c *NodeTaintCheck) Touches() Footprint  { return Footprint{Nodes: []NodeUse{{Name: c.Node}}} }
func (c *NodeTaintCheck) Validate() []Problem { return nil }

// NodeReadyCheck: the node's Ready condition is Ready.
type NodeReadyCheck struct {
	Node  string `yaml:"node"`
	Ready bool   `yaml:"ready"`
}

// Touches reads the node's kubelet too: a Ready condition follows it.
func (c *NodeReadyCheck) Touches() Footprint {
	return Footprint{Nodes: []NodeUse{{Name: c.Node, Inside: true}}}
}
func (c *NodeReadyCheck) Validate() []Problem { return nil }

// SubjectCheck names a user or "system:serviceaccount:NS:NAME" that must not hold cluster-admin powers.
type SubjectCheck struct {
	Subject string `yaml:"subject"`
}

func (c *SubjectCheck) Touches() Footprint {
	return Footprint{Subjects: []SubjectUse{{Name: c.Subject}}}
}
func (c *SubjectCheck) Validate() []Problem { return nil }

// NodeFileCheck reads a file inside a node container.
type NodeFileCheck struct {
	Node     string `yaml:"node"`
	Path     string `yaml:"path"`
	Exists   bool   `yaml:"exists"`
	Contains string `yaml:"contains"`
}

func (c *NodeFileCheck) Touches() Footprint {
	return Footprint{Nodes: []NodeUse{{Name: c.Node, Inside: true, Files: []string{c.Path}}}}
}
func (c *NodeFileCheck) Validate() []Problem { return nil }

// NodeExecCheck runs Command inside a node container (as after `ssh node`) and expects exit 0 and Contains in
// the output, or a failure with Fails.
type NodeExecCheck struct {
	Node     string   `yaml:"node"`
	Command  []string `yaml:"command"`
	Contains string   `yaml:"contains"`
	Fails    bool     `yaml:"fails"`
}

// Touches names the files its command names by absolute path.
func (c *NodeExecCheck) Touches() Footprint {
	var files []string
	for _, arg := range c.Command {
		for _, w := range strings.Fields(arg) {
			if strings.HasPrefix(w, "/") {
				files = append(files, w)
			}
		}
	}
	return Footprint{Nodes: []NodeUse{{Name: c.Node, Inside: true, Files: files}}}
}
func (c *NodeExecCheck) Validate() []Problem { return nil }

// ExecCheck runs Command in the first Ready Pod matching the selector and expects exit 0 and Contains in
// the output (or a failure, with Fails).
type ExecCheck struct {
	PodSelector `yaml:",inline"`
	Container   string   `yaml:"container"`
	Command     []string `yaml:"command"`
	Contains    string   `yaml:"contains"`
	// Equals is the whole output, surrounding white space aside: where "1000" must not match "10000".
	Equals string `yaml:"equals"`
	Fails  bool   `yaml:"fails"`
}

func (c *ExecCheck) Touches() Footprint  { return c.pods(AccessExec) }
func (c *ExecCheck) Validate() []Problem { return nil }

// LogsCheck reads the log of a container of the first Ready matching Pod, as `kubectl logs POD -c CONTAINER`
// shows it, and expects Contains in it: a sidecar that streams a file, an app that logs its start.
type LogsCheck struct {
	PodSelector `yaml:",inline"`
	Container   string `yaml:"container"`
	Contains    string `yaml:"contains"`
}

func (c *LogsCheck) Touches() Footprint  { return c.pods(AccessLogs) }
func (c *LogsCheck) Validate() []Problem { return nil }

// Custom names a Go check or fault registered in code, for what data cannot say.
type Custom struct {
	Func string            `yaml:"func"`
	Args map[string]string `yaml:"args"`
}

// CustomCheck is a Go check registered in the grader.
type CustomCheck struct {
	Custom `yaml:",inline"`
}

// Touches is what its arguments name: its node, read from inside, and the namespace it finds its objects in.
func (c *CustomCheck) Touches() Footprint {
	fp := Footprint{System: systemCustomChecks[c.Func]}
	if n, ok := c.Args["node"]; ok {
		fp.Nodes = []NodeUse{{Name: n, Inside: true}}
	}
	if ns, ok := c.Args["namespace"]; ok {
		fp.Watches = []string{ns}
	}
	return fp
}
func (c *CustomCheck) Validate() []Problem { return nil }

// GrantsCheck passes when everything the subject may do, through every binding that names it or one of its
// groups, is within Allow, beyond what every authenticated user may do: least privilege judged on the
// effective permissions, not on a few can-i questions.
type GrantsCheck struct {
	As     string      `yaml:"as"`
	Groups []string    `yaml:"groups"`
	Allow  []GrantRule `yaml:"allow"`
}

func (c *GrantsCheck) Touches() Footprint {
	return Footprint{Subjects: []SubjectUse{{Name: c.As, Groups: c.Groups, Grants: true}}}
}

func (c *GrantsCheck) Validate() []Problem {
	var out []Problem
	if c.As == "" {
		out = append(out, problem("", "needs as: the user or system:serviceaccount:<ns>:<name> to judge"))
	}
	for _, r := range c.Allow {
		if len(r.Resources) == 0 || len(r.Verbs) == 0 {
			out = append(out, problem("allow", "every allowed rule needs resources and verbs"))
		}
	}
	return out
}

// GrantRule is what the task allows: verbs on resources of an API group ("" is the core group) in a namespace
// ("" in every namespace, as a ClusterRoleBinding grants).
type GrantRule struct {
	Namespace string   `yaml:"namespace"`
	Group     string   `yaml:"group"`
	Resources []string `yaml:"resources"`
	Verbs     []string `yaml:"verbs"`
}

// RunningFlag reads a flag of a control-plane component from the command line its process runs with on a
// node: what the kubelet started from the static Pod manifest, the last occurrence winning as it does for
// the component. It passes when the value is one of Equals, or, with Enables, when the flag read as
// kube-controller-manager's --controllers list (unset is "*") turns that controller on.
type RunningFlag struct {
	Node      string   `yaml:"node"`
	Component string   `yaml:"component"`
	Flag      string   `yaml:"flag"`
	Equals    []string `yaml:"equals"`
	Enables   string   `yaml:"enables"`
}

// Touches reads the component's process on the node, started from its static Pod manifest.
func (f *RunningFlag) Touches() Footprint {
	return Footprint{Nodes: []NodeUse{{Name: f.Node, Inside: true, Files: []string{ManifestDir + f.Component + ".yaml"}, Component: f.Component}}}
}

func (f *RunningFlag) Validate() []Problem {
	if f.Node == "" || !componentName.MatchString(f.Component) || f.Flag == "" || (len(f.Equals) == 0) == (f.Enables == "") {
		return []Problem{problem("", "needs node, a component's name (lower-case letters, digits, dashes), flag, and equals or enables")}
	}
	return nil
}

// Want says what the check wants, for its evidence.
func (f *RunningFlag) Want() string {
	if f.Enables != "" {
		return "a --" + f.Flag + " list that enables " + f.Enables
	}
	return strings.Join(f.Equals, " or ")
}

// EnablesController says whether a --controllers list turns on controller: named, or covered by "*" and not
// switched off by "-name" (kube-controller-manager's rule; "*" alone is its default).
func EnablesController(list, controller string) bool {
	star := false
	for _, c := range strings.Split(list, ",") {
		switch strings.TrimSpace(c) {
		case controller:
			return true
		case "-" + controller:
			return false
		case "*":
			star = true
		}
	}
	return star
}

// KubeletConfig reads a field of the configuration a node's kubelet runs with (its configz, through the API
// server's node proxy), whatever file or flag set it. Field is a dotted path in KubeletConfiguration, e.g.
// authentication.x509.clientCAFile.
type KubeletConfig struct {
	Node   string `yaml:"node"`
	Field  string `yaml:"field"`
	Equals string `yaml:"equals"`
}

func (k *KubeletConfig) Touches() Footprint {
	return Footprint{Nodes: []NodeUse{{Name: k.Node, Inside: true}}}
}

func (k *KubeletConfig) Validate() []Problem {
	if k.Node == "" || k.Field == "" {
		return []Problem{problem("", "needs node and field")}
	}
	return nil
}

// TolerationCheck judges a workload's Pod template tolerations with Kubernetes' own matching: they tolerate
// the taint (key, value, effect); with Only, they tolerate no other taint on any node of the cluster.
type TolerationCheck struct {
	Object ObjectRef `yaml:"object"`
	Key    string    `yaml:"key"`
	Value  string    `yaml:"value"`
	Effect string    `yaml:"effect"`
	Only   bool      `yaml:"only"`
}

func (c *TolerationCheck) Touches() Footprint {
	return Footprint{Objects: []ObjectUse{{ObjectRef: c.Object, Exists: true, Workload: true}}}
}
func (c *TolerationCheck) Validate() []Problem { return nil }

// ContainerCheck reads a container of a workload's Pod template (or a Pod) by meaning: CommandLine is the
// command and args as the runtime joins them (everything in command, or split between command and args, is
// the same command line); Probe is the port a probe reaches, a named port resolved to its number.
type ContainerCheck struct {
	Object      ObjectRef  `yaml:"object"`
	Name        string     `yaml:"name"`
	CommandLine []string   `yaml:"commandLine"`
	Probe       *ProbePort `yaml:"probe"`
}

func (c *ContainerCheck) Touches() Footprint {
	return Footprint{Objects: []ObjectUse{{ObjectRef: c.Object, Exists: true, Workload: true}}}
}

func (c *ContainerCheck) Validate() []Problem {
	var out []Problem
	if (len(c.CommandLine) > 0) == (c.Probe != nil) {
		out = append(out, problem("", "needs exactly one of commandLine and probe"))
	}
	if c.Probe != nil && !slices.Contains([]string{"readiness", "liveness", "startup"}, c.Probe.Kind) {
		out = append(out, problem("probe", "kind must be readiness, liveness or startup"))
	}
	if c.Probe != nil && !slices.Contains([]string{"", "http", "tcp", "grpc"}, c.Probe.Type) {
		out = append(out, problem("probe", "type must be http, tcp or grpc"))
	}
	if c.Probe != nil && c.Probe.Path != "" && c.Probe.Type != "http" {
		out = append(out, problem("probe", "path needs type http"))
	}
	return out
}

// ProbePort is the port a readiness, liveness or startup probe must reach; Type, when set, how it must reach it
// (http, tcp, grpc), and Path the path an HTTP probe must ask for.
type ProbePort struct {
	Kind string `yaml:"kind"`
	Type string `yaml:"type"`
	Port int32  `yaml:"port"`
	Path string `yaml:"path"`
}

// ExistsCheck passes while the object exists.
type ExistsCheck struct {
	ObjectRef `yaml:",inline"`
}

func (c *ExistsCheck) Touches() Footprint {
	return Footprint{Objects: []ObjectUse{{ObjectRef: c.ObjectRef, Exists: true}}}
}
func (c *ExistsCheck) Validate() []Problem { return nil }

// AbsentCheck passes while the object does not exist.
type AbsentCheck struct {
	ObjectRef `yaml:",inline"`
}

func (c *AbsentCheck) Touches() Footprint {
	return Footprint{Objects: []ObjectUse{{ObjectRef: c.ObjectRef}}}
}
func (c *AbsentCheck) Validate() []Problem { return nil }

// SameObjectCheck passes while the object is the one the task started with.
type SameObjectCheck struct {
	ObjectRef `yaml:",inline"`
}

// Touches needs the object created by the scenario, unless it is a node, which the cluster owns.
func (c *SameObjectCheck) Touches() Footprint {
	return Footprint{Objects: []ObjectUse{{ObjectRef: c.ObjectRef, Exists: c.Kind != "Node"}}}
}
func (c *SameObjectCheck) Validate() []Problem { return nil }

// ManifestDir is where kubeadm's static Pod manifests are, on every node.
const ManifestDir = "/etc/kubernetes/manifests/"
