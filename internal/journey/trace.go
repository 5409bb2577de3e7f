package journey

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Status is how far the journey got at one handoff.
type Status string

const (
	Passed     Status = "passed"
	Failed     Status = "failed"
	NotReached Status = "not reached"
	// Skipped marks a handoff that does not apply to this Pod, such as init
	// containers on a Pod that has none.
	Skipped Status = "skipped"
)

// Evidence is what the caller collected from the cluster; Trace never calls
// the cluster itself.
type Evidence struct {
	// APIError is the error returned when the object was created or applied,
	// "" when none.
	APIError string
	// Workload is the controller the learner pointed at; nil for a bare Pod or
	// a selection by labels.
	Workload *Workload
	// Pod is nil when no Pod exists.
	Pod *corev1.Pod
	// Events are about the Pod and the claims it references, in any order.
	Events []corev1.Event
	// OwnerEvents are about the Pod's ReplicaSet or Deployment, e.g. FailedCreate.
	OwnerEvents []corev1.Event
	// Node is the Pod's node. It must be set when the Pod is bound: nil with a
	// nodeName means that node does not exist.
	Node *corev1.Node
	// Nodes are the cluster's nodes, read for a Pod the scheduler has not
	// placed: a NotReady node explains a not-ready taint it could not tolerate.
	Nodes []corev1.Node
	// PVCs are the existing claims the Pod references.
	PVCs []corev1.PersistentVolumeClaim
	// Now is when the evidence was read; restarts within recentRestart of it
	// still count. Zero leaves restarts of running containers unjudged.
	Now time.Time
	// LastLog is the last line each crashed container wrote before it
	// exited, by container name; read by explain only.
	LastLog map[string]string
	// Service is nil when no Service is in front of the Pod.
	Service *ServiceInfo
	// Traffic is what a Running and Ready Pod meets when it serves and calls
	// out; nil when it was not read (the grader reads only the way to Ready).
	Traffic *Traffic
}

// Workload is what the Pod's controller says about it.
type Workload struct {
	// Kind and Name as kubectl prints them, e.g. deployment and web.
	Kind, Name, Namespace string
	// Desired is how many Pods it asks for; nil when it does not say.
	Desired *int32
	// Why is what keeps it from wanting any Pod, e.g. "spec.replicas is 0";
	// "" when it wants some.
	Why string
	// Stuck is the condition of a rollout that stopped progressing, e.g.
	// "Progressing=False (ProgressDeadlineExceeded): ...", "" otherwise.
	Stuck string
	// OldReady counts the Ready Pods of earlier revisions, which keep serving
	// while a rollout is stuck.
	OldReady int
}

// Handoff is the outcome at one stage.
type Handoff struct {
	Stage  Stage
	Status Status
	Detail string
	// Commands are what to run to look further, for the stage where the
	// journey stopped, with the Pod's names filled in.
	Commands []string `json:",omitempty"`
}

// Result is the whole journey: one handoff per stage, in order.
type Result struct {
	Handoffs []Handoff
	// Stopped is the first stage that failed, "" when the whole journey passed.
	Stopped Stage
	// Evidence is the one line (event, condition or field) that shows where it stopped.
	Evidence string
	// Notes are what the workload adds to the Pod's story, e.g. a stuck rollout.
	Notes []string `json:",omitempty"`
}

type finding struct {
	stage    Stage
	detail   string
	evidence string
	// waitFrom is the first stage before the stop that never ran because of
	// it (e.g. the scheduler waits for a claim); "" when every stage before
	// the stop passed. waits says what they wait for.
	waitFrom Stage
	waits    string
	// vars fill the stage's command placeholders beyond the Pod's own.
	vars map[string]string
	// exited marks a container that exited and was not restarted: its logs
	// are the current ones, not --previous.
	exited bool
}

// checks run in the kubelet's order (see the Stage constants); checks after
// checkPodMissing may assume a Pod.
var checks = []func(Evidence) (finding, bool){
	checkAPIError,
	checkPodMissing,
	checkUnscheduled,
	checkNode,
	checkKubeletRejected,
	checkNetworkNotReady,
	checkMounts,
	checkSandbox,
	checkNotReported,
	checkInit,
	checkImage,
	checkCreate,
	checkApp,
	checkRestarts,
	checkWaiting,
	checkReadiness,
	checkService,
	checkNetworkPolicy,
	checkDNS,
	checkAPIAccess,
}

// Trace finds the first handoff where the Pod's journey diverged from the
// happy path: everything before it passed, everything after it was not reached.
func Trace(in Evidence) Result {
	var res Result
	var stop finding
	for _, check := range checks {
		if f, ok := check(in); ok {
			stop = f
			res.Stopped, res.Evidence = f.stage, f.evidence
			break
		}
	}
	for _, s := range Stages() {
		h := Handoff{Stage: s}
		switch {
		case res.Stopped != "" && stop.waitFrom != "" && s.Index() >= stop.waitFrom.Index() && s.Index() < res.Stopped.Index():
			h.Status, h.Detail = NotReached, stop.waits
		case res.Stopped == "" || s.Index() < res.Stopped.Index():
			h.Status, h.Detail = passed(s, in)
		case s == res.Stopped:
			h.Status, h.Detail = Failed, stop.detail
			h.Commands = commands(s, in, stop)
		default:
			h.Status = NotReached
		}
		res.Handoffs = append(res.Handoffs, h)
	}
	res.Notes = workloadNotes(in)
	return res
}

// passed describes a handoff the journey got through. Stages from controllers
// on are only passed when a Pod exists.
func passed(s Stage, in Evidence) (Status, string) {
	pod := in.Pod
	if pod == nil {
		// Only a controller that wants no Pod stops past controllers without one.
		return Passed, ""
	}
	switch s {
	case Controllers:
		if ref := metav1.GetControllerOf(pod); ref != nil {
			return Passed, "created by " + ref.Kind + " " + ref.Name
		}
		return Skipped, "bare Pod, no controller"
	case Scheduling:
		return Passed, "bound to " + pod.Spec.NodeName
	case Volumes:
		if len(pod.Spec.Volumes) == 0 {
			return Skipped, "no volumes"
		}
	case Sandbox:
		if pod.Spec.HostNetwork {
			return Passed, "hostNetwork: the node's network, no CNI"
		}
	case Init:
		if len(pod.Spec.InitContainers) == 0 {
			return Skipped, "no init containers"
		}
	case Readiness:
		if pod.Status.Phase == corev1.PodSucceeded {
			return Passed, "completed"
		}
	}
	if s.Index() > Readiness.Index() {
		return passedTraffic(s, in)
	}
	return Passed, ""
}

// workloadNotes tells what the controller adds: a rollout that stopped while
// older Pods still serve.
func workloadNotes(in Evidence) []string {
	w := in.Workload
	if w == nil || w.Stuck == "" {
		return nil
	}
	note := fmt.Sprintf("rollout of %s/%s is stuck: %s", w.Kind, w.Name, w.Stuck)
	if w.OldReady > 0 {
		note += fmt.Sprintf("; %d Pod(s) of the previous revision still serve", w.OldReady)
	}
	return []string{note, fmt.Sprintf("try: kubectl rollout status %s/%s -n %s; kubectl rollout history %s/%s -n %s",
		w.Kind, w.Name, in.namespace(), w.Kind, w.Name, in.namespace())}
}

func (in Evidence) namespace() string {
	switch {
	case in.Pod != nil:
		return in.Pod.Namespace
	case in.Workload != nil && in.Workload.Namespace != "":
		return in.Workload.Namespace
	}
	return "<namespace>"
}

// commands are what to run at the stage where the journey stopped, with the
// traced names filled in. Without a Pod, the controller is what to look at.
func commands(s Stage, in Evidence, stop finding) []string {
	cmds := s.Commands()
	if in.Pod == nil {
		cmds = slices.DeleteFunc(cmds, func(c string) bool { return strings.Contains(c, "<pod>") })
		if w := in.Workload; w != nil {
			cmds = append([]string{fmt.Sprintf("kubectl describe %s %s -n %s", w.Kind, w.Name, in.namespace())}, cmds...)
		}
	}
	if stop.exited {
		for i, c := range cmds {
			cmds[i] = strings.Replace(c, " --previous", "", 1)
		}
	}
	return fill(cmds, in, stop.vars)
}

// fill puts the traced Pod's names into a stage's commands.
func fill(cmds []string, in Evidence, vars map[string]string) []string {
	pairs := []string{}
	for k, v := range vars {
		pairs = append(pairs, "<"+k+">", v)
	}
	pairs = append(pairs, "<namespace>", in.namespace())
	if pod := in.Pod; pod != nil {
		pairs = append(pairs, "<pod>", pod.Name)
		if pod.Spec.NodeName != "" {
			pairs = append(pairs, "<node>", pod.Spec.NodeName)
		}
		if sa := pod.Spec.ServiceAccountName; sa != "" {
			pairs = append(pairs, "<serviceaccount>", sa)
		}
	}
	if in.Service != nil {
		pairs = append(pairs, "<service>", in.Service.Name)
	}
	r := strings.NewReplacer(pairs...)
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = r.Replace(c)
	}
	return out
}

var rejectedBy = map[Stage]string{
	Authentication: "the API server did not accept the credentials",
	Authorization:  "RBAC does not allow this request",
	Admission:      "an admission controller rejected the object",
	Persistence:    "the API server could not store the object",
}

func checkAPIError(in Evidence) (finding, bool) {
	if strings.TrimSpace(in.APIError) == "" {
		return finding{}, false
	}
	s := classifyRejection(in.APIError)
	return finding{stage: s, detail: rejectedBy[s], evidence: oneLine(in.APIError)}, true
}

// classifyRejection maps an API server error to the stage that produced it.
// Admission is tested first because webhook TLS failures mention
// certificates and quota or PodSecurity denials say "forbidden" too.
func classifyRejection(msg string) Stage {
	m := strings.ToLower(msg)
	switch {
	case containsAny(m, "admission webhook", "failed calling webhook", "denied the request",
		"exceeded quota", "failed quota", "limitrange", "per container is", "per pod is",
		"violates podsecurity", "must be less than or equal", "is invalid"):
		return Admission
	case strings.Contains(m, "forbidden") && strings.Contains(m, "cannot"):
		return Authorization
	case containsAny(m, "unauthorized", "x509", "certificate", "must be logged in"):
		return Authentication
	case strings.Contains(m, "forbidden"):
		// Forbidden without an RBAC subject comes from an admission plugin,
		// e.g. a missing ServiceAccount.
		return Admission
	}
	return Persistence
}

func checkPodMissing(in Evidence) (finding, bool) {
	if in.Pod != nil {
		return finding{}, false
	}
	if e := newest(in.OwnerEvents, withReason("FailedCreate")); e != nil {
		s := classifyRejection(e.Message)
		return finding{stage: s, detail: "the controller could not create the Pod: " + rejectedBy[s], evidence: eventLine(e)}, true
	}
	if w := in.Workload; w != nil && w.Why != "" {
		stage := Controllers
		if w.Kind == "daemonset" {
			// A DaemonSet wants a Pod on every node its selector and tolerations fit.
			stage = Scheduling
		}
		return finding{stage: stage, detail: fmt.Sprintf("%s/%s asks for no Pod", w.Kind, w.Name), evidence: w.Why}, true
	}
	return finding{stage: Controllers, detail: "no Pod was created (is kube-controller-manager running?)", evidence: "no Pod exists"}, true
}

// eventTime is when the event last happened; which field holds that depends
// on whether it was written through the core or the events.k8s.io API.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.FirstTimestamp.Time
}

// podEvent returns the newest matching event about the Pod itself. Name and
// UID are compared so events of owners or of an earlier Pod with the same
// name are ignored.
func (in Evidence) podEvent(keep func(*corev1.Event) bool) *corev1.Event {
	pod := in.Pod
	return newest(in.Events, func(e *corev1.Event) bool {
		o := e.InvolvedObject
		return (o.Kind == "" || o.Kind == "Pod") &&
			(o.Name == "" || o.Name == pod.Name) &&
			(o.UID == "" || pod.UID == "" || o.UID == pod.UID) &&
			keep(e)
	})
}

func (in Evidence) claimEvent(claim string) *corev1.Event {
	return newest(in.Events, func(e *corev1.Event) bool {
		return e.InvolvedObject.Kind == "PersistentVolumeClaim" && e.InvolvedObject.Name == claim
	})
}

// newest returns the most recent kept event; on a tie the later one in the slice wins.
func newest(events []corev1.Event, keep func(*corev1.Event) bool) *corev1.Event {
	var best *corev1.Event
	for i := range events {
		e := &events[i]
		if keep(e) && (best == nil || !eventTime(e).Before(eventTime(best))) {
			best = e
		}
	}
	return best
}

func withReason(reasons ...string) func(*corev1.Event) bool {
	return func(e *corev1.Event) bool { return slices.Contains(reasons, e.Reason) }
}

func eventLine(e *corev1.Event) string {
	return oneLine(e.Reason + ": " + e.Message)
}

func conditionLine(c *corev1.PodCondition) string {
	return condLine(string(c.Type), string(c.Status), c.Reason, c.Message)
}

// condLine renders a Pod or Node condition the way kubectl describe reads.
func condLine(typ, status, reason, message string) string {
	s := typ + "=" + status
	if reason != "" {
		s += " (" + reason + ")"
	}
	if message != "" {
		s += ": " + message
	}
	return oneLine(s)
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func containsAny(s string, subs ...string) bool {
	return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(s, sub) })
}

// oneLine collapses whitespace so multi-line API errors fit on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Request is the journey of a request that creates no Pod (an RBAC or
// admission task): the API server's stages pass up to stop ("" for all of
// them), and the Pod's stages do not apply.
func Request(stop Stage, detail, evidence string) Result {
	res := Result{Stopped: stop, Evidence: evidence}
	for _, s := range Stages() {
		h := Handoff{Stage: s}
		switch {
		case stop != "" && s == stop:
			h.Status, h.Detail = Failed, detail
			h.Commands = s.Commands()
		case stop != "" && s.Index() > stop.Index():
			h.Status = NotReached
		case s.Index() <= Persistence.Index():
			h.Status = Passed
		default:
			h.Status, h.Detail = Skipped, "no Pod: the task is about an API request"
		}
		res.Handoffs = append(res.Handoffs, h)
	}
	return res
}
