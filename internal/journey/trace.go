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

// ServiceInfo describes the Service in front of the Pod.
type ServiceInfo struct {
	Name           string
	ReadyEndpoints int
}

// Evidence is what the caller collected from the cluster; Trace never calls
// the cluster itself.
type Evidence struct {
	// APIError is the error returned when the object was created or applied,
	// "" when none.
	APIError string
	// Pod is nil when no Pod exists.
	Pod *corev1.Pod
	// Events are about the Pod and the claims it references, in any order.
	Events []corev1.Event
	// OwnerEvents are about the Pod's ReplicaSet or Deployment, e.g. FailedCreate.
	OwnerEvents []corev1.Event
	// Node is the Pod's node. It must be set when the Pod is bound: nil with a
	// nodeName means that node does not exist.
	Node *corev1.Node
	// PVCs are the existing claims the Pod references.
	PVCs []corev1.PersistentVolumeClaim
	// Service is nil when the exercise has no Service in front of the Pod.
	Service *ServiceInfo
}

// Handoff is the outcome at one stage.
type Handoff struct {
	Stage  Stage
	Status Status
	Detail string
}

// Result is the whole journey: one handoff per stage, in order.
type Result struct {
	Handoffs []Handoff
	// Stopped is the first stage that failed, "" when the whole journey passed.
	Stopped Stage
	// Evidence is the one line (event, condition or field) that shows where it stopped.
	Evidence string
}

type finding struct {
	stage    Stage
	detail   string
	evidence string
}

// checks run in the order their signals appear on a real Pod, which is not
// always stage order: an init container's image is pulled before the init
// stage is judged. Checks after checkPodMissing may assume a Pod.
var checks = []func(Evidence) (finding, bool){
	checkAPIError,
	checkPodMissing,
	checkUnscheduled,
	checkNode,
	checkKubeletRejected,
	checkSandbox,
	checkMounts,
	checkNotReported,
	checkImageAndConfig,
	checkInit,
	checkApp,
	checkWaiting,
	checkReadiness,
	checkService,
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
		case res.Stopped == "" || s.Index() < res.Stopped.Index():
			h.Status, h.Detail = passed(s, in)
		case s == res.Stopped:
			h.Status, h.Detail = Failed, stop.detail
		default:
			h.Status = NotReached
		}
		res.Handoffs = append(res.Handoffs, h)
	}
	return res
}

// passed describes a handoff the journey got through. Stages from controllers
// on are only passed when a Pod exists.
func passed(s Stage, in Evidence) (Status, string) {
	pod := in.Pod
	switch s {
	case Controllers:
		if ref := metav1.GetControllerOf(pod); ref != nil {
			return Passed, "created by " + ref.Kind + " " + ref.Name
		}
		return Skipped, "bare Pod, no controller"
	case Scheduling:
		return Passed, "bound to " + pod.Spec.NodeName
	case Network:
		if pod.Spec.HostNetwork {
			return Skipped, "hostNetwork Pod"
		}
	case Storage:
		if len(pod.Spec.Volumes) == 0 {
			return Skipped, "no volumes"
		}
	case Init:
		if len(pod.Spec.InitContainers) == 0 {
			return Skipped, "no init containers"
		}
	case Service:
		if in.Service == nil {
			return Skipped, "no Service"
		}
		return Passed, fmt.Sprintf("Service %s has %d ready endpoint(s)", in.Service.Name, in.Service.ReadyEndpoints)
	}
	return Passed, ""
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
	return finding{s, rejectedBy[s], oneLine(in.APIError)}, true
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
		return finding{s, "the controller could not create the Pod: " + rejectedBy[s], eventLine(e)}, true
	}
	return finding{Controllers, "no Pod was created (is kube-controller-manager running?)", "no Pod exists"}, true
}

func checkUnscheduled(in Evidence) (finding, bool) {
	pod := in.Pod
	if pod.Spec.NodeName != "" {
		return finding{}, false
	}
	if f, ok := unboundClaim(in); ok {
		return f, true
	}
	var line string
	if e := in.podEvent(withReason("FailedScheduling")); e != nil {
		line = eventLine(e)
	} else if c := podCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
		line = conditionLine(c)
	}
	switch {
	case line == "":
		return finding{Scheduling, "no scheduling decision yet (is kube-scheduler running?)",
			"no PodScheduled condition and no FailedScheduling event"}, true
	case containsAny(strings.ToLower(line), "persistentvolumeclaim", "persistent volume", "volume node affinity"):
		return finding{Storage, "a volume claim keeps the Pod from being scheduled", line}, true
	}
	return finding{Scheduling, "the scheduler found no node for the Pod", line}, true
}

// unboundClaim reports a referenced claim that is not Bound. A claim waiting
// for its first consumer is the scheduler's move, not a storage failure.
func unboundClaim(in Evidence) (finding, bool) {
	for _, pvc := range in.PVCs {
		if pvc.Status.Phase == corev1.ClaimBound {
			continue
		}
		e := in.claimEvent(pvc.Name)
		if e != nil && e.Reason == "WaitForFirstConsumer" {
			continue
		}
		line := fmt.Sprintf("PersistentVolumeClaim %s is not Bound", pvc.Name)
		if e != nil {
			line = eventLine(e)
		}
		return finding{Storage, fmt.Sprintf("claim %s is not bound", pvc.Name), line}, true
	}
	return finding{}, false
}

func checkNode(in Evidence) (finding, bool) {
	name := in.Pod.Spec.NodeName
	if in.Node == nil {
		return finding{Kubelet, fmt.Sprintf("node %s does not exist", name),
			fmt.Sprintf("spec.nodeName %q matches no Node", name)}, true
	}
	var ready *corev1.NodeCondition
	for i := range in.Node.Status.Conditions {
		if in.Node.Status.Conditions[i].Type == corev1.NodeReady {
			ready = &in.Node.Status.Conditions[i]
		}
	}
	if ready == nil {
		return finding{Kubelet, fmt.Sprintf("node %s is NotReady", name),
			fmt.Sprintf("node %s has no Ready condition", name)}, true
	}
	if ready.Status == corev1.ConditionTrue {
		return finding{}, false
	}
	line := "node " + name + " " + condLine(string(ready.Type), string(ready.Status), ready.Reason, ready.Message)
	return finding{notReadyStage(ready.Message), fmt.Sprintf("node %s is NotReady", name), line}, true
}

// notReadyStage blames the runtime or CNI when a live kubelet says they are
// why its node is NotReady; otherwise the kubelet itself is the suspect.
func notReadyStage(msg string) Stage {
	m := strings.ToLower(msg)
	switch {
	case containsAny(m, "networkready=false", "network plugin", "cni"):
		return Network
	case containsAny(m, "container runtime is down", "runtimeready=false"):
		return Runtime
	}
	return Kubelet
}

// checkKubeletRejected catches Pods the kubelet refused or evicted, e.g.
// OutOfcpu after a hand-set nodeName bypassed the scheduler.
func checkKubeletRejected(in Evidence) (finding, bool) {
	st := in.Pod.Status
	if st.Phase != corev1.PodFailed || st.Reason == "" {
		return finding{}, false
	}
	return finding{Kubelet, "the kubelet rejected or evicted the Pod", oneLine(st.Reason + ": " + st.Message)}, true
}

func checkSandbox(in Evidence) (finding, bool) {
	if pastSandbox(in.Pod) {
		return finding{}, false
	}
	e := in.podEvent(withReason("FailedCreatePodSandBox"))
	if e == nil {
		return finding{}, false
	}
	if containsAny(strings.ToLower(e.Message), "cni", "network", "failed to find plugin", "plugin type") {
		return finding{Network, "the CNI plugin could not set up the Pod's network", eventLine(e)}, true
	}
	return finding{Runtime, "the container runtime could not create the Pod sandbox", eventLine(e)}, true
}

func checkMounts(in Evidence) (finding, bool) {
	if pastSandbox(in.Pod) {
		return finding{}, false
	}
	if e := in.podEvent(withReason("FailedMount", "FailedAttachVolume")); e != nil {
		return finding{Storage, "the kubelet could not attach or mount a volume", eventLine(e)}, true
	}
	return unboundClaim(in)
}

// pastSandbox reports whether the kubelet got beyond volume and sandbox
// setup, which makes older mount and sandbox events stale.
func pastSandbox(pod *corev1.Pod) bool {
	if c := podCondition(pod, corev1.PodReadyToStartContainers); c != nil && c.Status == corev1.ConditionTrue {
		return true
	}
	for _, st := range allStatuses(pod) {
		w := st.State.Waiting
		if w == nil || st.LastTerminationState.Terminated != nil ||
			!slices.Contains([]string{"", "ContainerCreating", "PodInitializing"}, w.Reason) {
			return true
		}
	}
	return false
}

// checkNotReported catches a Pod bound to a Ready node whose kubelet has not
// reported on it, e.g. a kubelet that stopped moments ago.
func checkNotReported(in Evidence) (finding, bool) {
	if len(allStatuses(in.Pod)) > 0 {
		return finding{}, false
	}
	node := in.Pod.Spec.NodeName
	return finding{Kubelet, fmt.Sprintf("the kubelet on %s has not started the Pod", node),
		"no container statuses reported"}, true
}

var (
	imageReasons      = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "ImageInspectError"}
	imageEventReasons = []string{"Failed", "InspectFailed", "ErrImageNeverPull"}
	configReasons     = []string{"CreateContainerConfigError", "CreateContainerError", "RunContainerError"}
)

func checkImageAndConfig(in Evidence) (finding, bool) {
	for _, st := range allStatuses(in.Pod) {
		w := st.State.Waiting
		switch {
		case w == nil:
		case slices.Contains(imageReasons, w.Reason):
			return imageFinding(in, st), true
		case slices.Contains(configReasons, w.Reason):
			return finding{Runtime, fmt.Sprintf("container %s could not be created", st.Name),
				oneLine(w.Reason + ": " + w.Message)}, true
		}
	}
	return finding{}, false
}

// imageFinding prefers the kubelet's Failed event, which carries the
// registry's answer, over the terser waiting message.
func imageFinding(in Evidence, st corev1.ContainerStatus) finding {
	msg := st.State.Waiting.Message
	e := in.podEvent(func(e *corev1.Event) bool {
		return slices.Contains(imageEventReasons, e.Reason) && strings.Contains(e.Message, st.Image)
	})
	if e != nil {
		msg = e.Message
	}
	return finding{Runtime, fmt.Sprintf("container %s cannot get image %s", st.Name, st.Image),
		oneLine(fmt.Sprintf("%s (image %q): %s", st.State.Waiting.Reason, st.Image, msg))}
}

func checkInit(in Evidence) (finding, bool) {
	pod := in.Pod
	for i, st := range pod.Status.InitContainerStatuses {
		// Init containers run one at a time, so i of them have completed.
		progress := fmt.Sprintf("Init:%d/%d: ", i, len(pod.Spec.InitContainers))
		if crashed(st) {
			return finding{Init, fmt.Sprintf("init container %s fails", st.Name), progress + exitLine(st)}, true
		}
		if st.State.Running != nil && !isSidecar(pod, st.Name) {
			return finding{Init, fmt.Sprintf("init container %s still running (waiting on something?)", st.Name),
				progress + fmt.Sprintf("init container %s is Running", st.Name)}, true
		}
	}
	return finding{}, false
}

// isSidecar reports a restartable init container, which runs for the Pod's
// whole life and so is never "stuck".
func isSidecar(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
	}
	return false
}

func checkApp(in Evidence) (finding, bool) {
	for _, st := range in.Pod.Status.ContainerStatuses {
		if !crashed(st) {
			continue
		}
		detail := fmt.Sprintf("container %s crashes", st.Name)
		if t := lastExit(st); t != nil && t.Reason == "OOMKilled" {
			detail = fmt.Sprintf("container %s was OOMKilled (memory limit too low?)", st.Name)
		}
		return finding{App, detail, exitLine(st)}, true
	}
	return finding{}, false
}

// crashed reports a container that exited badly, is backing off after doing
// so, or was OOMKilled and will be again.
func crashed(st corev1.ContainerStatus) bool {
	if w := st.State.Waiting; w != nil && (w.Reason == "CrashLoopBackOff" || w.Reason == "Error") {
		return true
	}
	if t := st.State.Terminated; t != nil {
		return t.ExitCode != 0
	}
	t := st.LastTerminationState.Terminated
	return t != nil && t.Reason == "OOMKilled"
}

// lastExit is the termination that explains a crash: the current one, or the
// previous one while the container backs off or restarts.
func lastExit(st corev1.ContainerStatus) *corev1.ContainerStateTerminated {
	if st.State.Terminated != nil {
		return st.State.Terminated
	}
	return st.LastTerminationState.Terminated
}

func exitLine(st corev1.ContainerStatus) string {
	var parts []string
	if w := st.State.Waiting; w != nil {
		parts = append(parts, w.Reason)
	}
	if t := lastExit(st); t != nil {
		exit := fmt.Sprintf("container %s exited (exit code %d)", st.Name, t.ExitCode)
		if t.Reason != "" {
			exit = fmt.Sprintf("container %s exited %s (exit code %d)", st.Name, t.Reason, t.ExitCode)
		}
		parts = append(parts, exit)
		if t.Message != "" {
			parts = append(parts, t.Message)
		}
	}
	return oneLine(strings.Join(parts, ": "))
}

// checkWaiting catches containers still being created without an error yet,
// so they are not misread as a readiness problem.
func checkWaiting(in Evidence) (finding, bool) {
	for _, st := range allStatuses(in.Pod) {
		if w := st.State.Waiting; w != nil {
			line := fmt.Sprintf("container %s is waiting", st.Name)
			if w.Reason != "" {
				line = w.Reason + ": " + line
			}
			return finding{Runtime, fmt.Sprintf("container %s has not started yet", st.Name), line}, true
		}
	}
	return finding{}, false
}

func checkReadiness(in Evidence) (finding, bool) {
	pod := in.Pod
	// A completed Pod (e.g. a Job's) is never Ready, and need not be.
	if pod.Status.Phase == corev1.PodSucceeded {
		return finding{}, false
	}
	detail := ""
	for _, st := range pod.Status.ContainerStatuses {
		if !st.Ready {
			detail = fmt.Sprintf("container %s is Running but not Ready", st.Name)
			break
		}
	}
	cond := podCondition(pod, corev1.PodReady)
	condFalse := cond != nil && cond.Status != corev1.ConditionTrue
	if detail == "" && !condFalse {
		return finding{}, false
	}
	if detail == "" {
		detail = "the Pod is Running but not Ready"
	}
	probe := in.podEvent(func(e *corev1.Event) bool {
		return e.Reason == "Unhealthy" && strings.HasPrefix(e.Message, "Readiness probe")
	})
	switch {
	case probe != nil:
		return finding{Readiness, detail, eventLine(probe)}, true
	case condFalse:
		return finding{Readiness, detail, conditionLine(cond)}, true
	}
	return finding{Readiness, detail, detail}, true
}

func checkService(in Evidence) (finding, bool) {
	svc := in.Service
	if svc == nil || svc.ReadyEndpoints > 0 {
		return finding{}, false
	}
	return finding{Service, fmt.Sprintf("Service %s selects no ready Pod (check its selector and ports)", svc.Name),
		fmt.Sprintf("Service %s has 0 ready endpoints", svc.Name)}, true
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

func allStatuses(pod *corev1.Pod) []corev1.ContainerStatus {
	return slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses)
}

func containsAny(s string, subs ...string) bool {
	return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(s, sub) })
}

// oneLine collapses whitespace so multi-line API errors fit on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
