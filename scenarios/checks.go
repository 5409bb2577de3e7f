package scenarios

import "strings"

// Check is one grader assertion over live cluster state; exactly one kind is set. Checks are also used as
// symptoms (what must be true once the fault is in).
//
// Adding a check kind: a pointer field here; its name in Check.Kind; its case in grader.Evaluate (both
// pinned by grader's TestEveryCheckKindIsEvaluated); its namespace or nodes in grader's targetsOf, so grading
// waits for what it reads to converge; Check.namespace or Check.object in lint.go when it names a namespace
// or an object the setup must create; its required fields in validator.checks; a line in scenarios/README.md.
type Check struct {
	Name   string `yaml:"name"`
	Points int    `yaml:"points"`
	// Decisive marks a check that only the learner can turn, never the cluster converging (a line in a
	// file on a node): once it has failed a few rounds in a row, grading stops waiting for the others.
	Decisive bool `yaml:"decisive"`

	PodsReady *PodsReady  `yaml:"podsReady"`
	PodState  *PodState   `yaml:"podState"`
	Event     *EventCheck `yaml:"event"`
	CanI      *CanI       `yaml:"canI"`
	Field     *FieldCheck `yaml:"field"`
	Exists    *ObjectRef  `yaml:"exists"`
	Absent    *ObjectRef  `yaml:"absent"`
	// SameObject passes while the object is the one the task started with: created before the task was
	// shown, not deleted and recreated since.
	SameObject      *ObjectRef       `yaml:"sameObject"`
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
	Custom          *Custom          `yaml:"custom"`
}

// PodSelector picks Pods by name or label selector in a namespace.
type PodSelector struct {
	Namespace string `yaml:"namespace"`
	Name      string `yaml:"name"`
	Selector  string `yaml:"selector"`
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

// PodState: some matching Pod is in this state. Reason matches a container's (or init container's) waiting or
// terminated reason, or the Pod's own reason; any of the listed values.
type PodState struct {
	PodSelector `yaml:",inline"`
	Phase       string   `yaml:"phase"`
	Reason      []string `yaml:"reason"`
	Ready       *bool    `yaml:"ready"`
	Scheduled   *bool    `yaml:"scheduled"`
}

// EventCheck: an event with Reason (and Message containing the text) exists about an object whose name starts
// with NamePrefix (Deployment Pods have generated names).
type EventCheck struct {
	Namespace  string `yaml:"namespace"`
	Kind       string `yaml:"kind"`
	NamePrefix string `yaml:"namePrefix"`
	Reason     string `yaml:"reason"`
	Message    string `yaml:"message"`
}

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

// EndpointsCheck: the Service has at least Ready ready endpoints (Ready 0 with Exactly checks it has none).
type EndpointsCheck struct {
	Namespace string `yaml:"namespace"`
	Service   string `yaml:"service"`
	Ready     int    `yaml:"ready"`
	Exactly   bool   `yaml:"exactly"`
}

// HTTPCheck gets Path from a Service through the API server's proxy and expects Contains in the body.
type HTTPCheck struct {
	Namespace string `yaml:"namespace"`
	Service   string `yaml:"service"`
	Port      string `yaml:"port"`
	Path      string `yaml:"path"`
	Contains  string `yaml:"contains"`
}

// NodeTaintCheck: the node has (Present) or lacks a taint with this key (and effect, when set).
type NodeTaintCheck struct {
	Node    string `yaml:"node"`
	Key     string `yaml:"key"`
	Effect  string `yaml:"effect"`
	Present bool   `yaml:"present"`
}

// NodeReadyCheck: the node's Ready condition is Ready.
type NodeReadyCheck struct {
	Node  string `yaml:"node"`
	Ready bool   `yaml:"ready"`
}

// SubjectCheck names a user or "system:serviceaccount:NS:NAME" that must not hold cluster-admin powers.
type SubjectCheck struct {
	Subject string `yaml:"subject"`
}

// NodeFileCheck reads a file inside a node container.
type NodeFileCheck struct {
	Node     string `yaml:"node"`
	Path     string `yaml:"path"`
	Exists   bool   `yaml:"exists"`
	Contains string `yaml:"contains"`
}

// NodeExecCheck runs Command inside a node container (as after `ssh node`) and expects exit 0 and Contains in
// the output, or a failure with Fails.
type NodeExecCheck struct {
	Node     string   `yaml:"node"`
	Command  []string `yaml:"command"`
	Contains string   `yaml:"contains"`
	Fails    bool     `yaml:"fails"`
}

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

// LogsCheck reads the log of a container of the first Ready matching Pod, as `kubectl logs POD -c CONTAINER`
// shows it, and expects Contains in it: a sidecar that streams a file, an app that logs its start.
type LogsCheck struct {
	PodSelector `yaml:",inline"`
	Container   string `yaml:"container"`
	Contains    string `yaml:"contains"`
}

// Custom names a Go check or fault registered in code, for what data cannot say.
type Custom struct {
	Func string            `yaml:"func"`
	Args map[string]string `yaml:"args"`
}

// Kind returns the name of the check kind that is set, "" when none is, and how many are set.
func (c *Check) Kind() (string, int) {
	kinds := []struct {
		name string
		set  bool
	}{
		{"podsReady", c.PodsReady != nil}, {"podState", c.PodState != nil}, {"event", c.Event != nil},
		{"canI", c.CanI != nil}, {"field", c.Field != nil}, {"exists", c.Exists != nil}, {"absent", c.Absent != nil},
		{"sameObject", c.SameObject != nil},
		{"admission", c.Admission != nil}, {"endpoints", c.Endpoints != nil}, {"http", c.HTTP != nil},
		{"nodeTaint", c.NodeTaint != nil}, {"nodeReady", c.NodeReady != nil},
		{"notClusterAdmin", c.NotClusterAdmin != nil}, {"grants", c.Grants != nil}, {"nodeFile", c.NodeFile != nil}, {"runningFlag", c.RunningFlag != nil},
		{"kubeletConfig", c.KubeletConfig != nil}, {"tolerates", c.Tolerates != nil},
		{"container", c.Container != nil}, {"nodeExec", c.NodeExec != nil}, {"exec", c.Exec != nil}, {"logs", c.Logs != nil},
		{"custom", c.Custom != nil},
	}
	name, n := "", 0
	for _, k := range kinds {
		if k.set {
			name, n = k.name, n+1
		}
	}
	return name, n
}

// GrantsCheck passes when everything the subject may do, through every binding that names it or one of its
// groups, is within Allow, beyond what every authenticated user may do: least privilege judged on the
// effective permissions, not on a few can-i questions.
type GrantsCheck struct {
	As     string      `yaml:"as"`
	Groups []string    `yaml:"groups"`
	Allow  []GrantRule `yaml:"allow"`
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

// TolerationCheck judges a workload's Pod template tolerations with Kubernetes' own matching: they tolerate
// the taint (key, value, effect); with Only, they tolerate no other taint on any node of the cluster.
type TolerationCheck struct {
	Object ObjectRef `yaml:"object"`
	Key    string    `yaml:"key"`
	Value  string    `yaml:"value"`
	Effect string    `yaml:"effect"`
	Only   bool      `yaml:"only"`
}

// ContainerCheck reads a container of a workload's Pod template (or a Pod) by meaning: CommandLine is the
// command and args as the runtime joins them (everything in command, or split between command and args, is
// the same command line); Probe is the port a probe reaches, a named port resolved to its number.
type ContainerCheck struct {
	Object      ObjectRef  `yaml:"object"`
	Name        string     `yaml:"name"`
	CommandLine []string   `yaml:"commandLine"`
	Probe       *ProbePort `yaml:"probe"`
}

// ProbePort is the port a readiness, liveness or startup probe must reach.
type ProbePort struct {
	Kind string `yaml:"kind"`
	Port int32  `yaml:"port"`
}
