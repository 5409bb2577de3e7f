package journey

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The checks of this file follow the Pod from the scheduler's bind through
// the kubelet's SyncPod: node, volumes, sandbox, then each container (init
// containers first) from image to running, then readiness.

func checkUnscheduled(in Evidence) (finding, bool) {
	pod := in.Pod
	if pod.Spec.NodeName != "" {
		return finding{}, false
	}
	if f, ok := unboundClaim(in); ok {
		f.waitFrom, f.waits = Scheduling, "the scheduler waits for the Pod's claims to bind"
		return f, true
	}
	var line string
	if e := in.podEvent(withReason("FailedScheduling")); e != nil {
		line = eventLine(e)
	} else if c := podCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
		line = conditionLine(c)
	}
	lower := strings.ToLower(line)
	switch {
	case line == "":
		return finding{stage: Scheduling, detail: "no scheduling decision yet (is kube-scheduler running?)",
			evidence: "no PodScheduled condition and no FailedScheduling event"}, true
	case containsAny(lower, "persistentvolumeclaim", "persistent volume", "volume node affinity"):
		return finding{stage: Volumes, detail: "a volume claim keeps the Pod from being scheduled", evidence: line,
			waitFrom: Scheduling, waits: "the scheduler waits for the Pod's claims"}, true
	case containsAny(lower, "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
		if f, ok := notReadyNode(in.Nodes); ok {
			f.evidence = f.evidence + "; " + line
			f.waitFrom, f.waits = Scheduling, "the scheduler keeps Pods off a node that is not Ready"
			return f, true
		}
	}
	return finding{stage: Scheduling, detail: "the scheduler found no node for the Pod", evidence: line}, true
}

// notReadyNode blames the first NotReady node for a not-ready taint the
// scheduler reported.
func notReadyNode(nodes []corev1.Node) (finding, bool) {
	for i := range nodes {
		if f, ok := nodeFinding(&nodes[i], nodes[i].Name); ok {
			return f, true
		}
	}
	return finding{}, false
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
		return finding{stage: Volumes, detail: fmt.Sprintf("claim %s is not bound", pvc.Name), evidence: line}, true
	}
	return finding{}, false
}

func checkNode(in Evidence) (finding, bool) {
	name := in.Pod.Spec.NodeName
	if in.Node == nil {
		return finding{stage: Kubelet, detail: fmt.Sprintf("node %s does not exist", name),
			evidence: fmt.Sprintf("spec.nodeName %q matches no Node", name)}, true
	}
	return nodeFinding(in.Node, name)
}

// nodeFinding reports a node that is not Ready. A live kubelet that says its
// runtime or network plugin is why starts no Pod (Kubelet.SyncPod returns
// before WaitForAttachAndMount), so the volumes were never reached.
func nodeFinding(node *corev1.Node, name string) (finding, bool) {
	var ready *corev1.NodeCondition
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			ready = &node.Status.Conditions[i]
		}
	}
	vars := map[string]string{"node": name}
	if ready == nil {
		return finding{stage: Kubelet, detail: fmt.Sprintf("node %s is NotReady", name),
			evidence: fmt.Sprintf("node %s has no Ready condition", name), vars: vars}, true
	}
	if ready.Status == corev1.ConditionTrue {
		return finding{}, false
	}
	line := "node " + name + " " + condLine(string(ready.Type), string(ready.Status), ready.Reason, ready.Message)
	f := finding{stage: Kubelet, detail: fmt.Sprintf("node %s is NotReady", name), evidence: line, vars: vars}
	m := strings.ToLower(ready.Message)
	switch {
	case containsAny(m, "networkready=false", "network plugin", "cni"):
		f.stage, f.detail = Sandbox, fmt.Sprintf("node %s is NotReady: its network plugin (CNI) is not ready", name)
		f.waitFrom, f.waits = Volumes, "the kubelet starts no Pod until the node's network is ready"
	case containsAny(m, "container runtime is down", "runtimeready=false"):
		f.stage, f.detail = Sandbox, fmt.Sprintf("node %s is NotReady: its container runtime is down", name)
		f.waitFrom, f.waits = Volumes, "the kubelet starts no Pod while the runtime is down"
	}
	return f, true
}

// checkKubeletRejected catches Pods the kubelet refused or evicted, e.g.
// OutOfcpu after a hand-set nodeName bypassed the scheduler.
func checkKubeletRejected(in Evidence) (finding, bool) {
	st := in.Pod.Status
	if st.Phase != corev1.PodFailed || st.Reason == "" {
		return finding{}, false
	}
	return finding{stage: Kubelet, detail: "the kubelet rejected or evicted the Pod", evidence: oneLine(st.Reason + ": " + st.Message)}, true
}

// checkNetworkNotReady catches the kubelet's refusal to start a Pod on a node
// whose network plugin is not ready, which it decides before the volumes.
func checkNetworkNotReady(in Evidence) (finding, bool) {
	if PastSandbox(in.Pod) || in.Pod.Spec.HostNetwork {
		return finding{}, false
	}
	e := in.podEvent(withReason("NetworkNotReady"))
	if e == nil {
		return finding{}, false
	}
	return finding{stage: Sandbox, detail: "the node's network plugin (CNI) is not ready", evidence: eventLine(e),
		waitFrom: Volumes, waits: "the kubelet starts no Pod until the node's network is ready"}, true
}

func checkMounts(in Evidence) (finding, bool) {
	if PastSandbox(in.Pod) {
		return finding{}, false
	}
	failed := withReason("FailedMount", "FailedAttachVolume")
	if e := in.podEvent(func(e *corev1.Event) bool { return failed(e) && !CacheNotSynced(e) }); e != nil {
		return finding{stage: Volumes, detail: "the kubelet could not attach or mount a volume", evidence: eventLine(e)}, true
	}
	return unboundClaim(in)
}

// CacheNotSynced says whether a mount failed only because the kubelet's cache of the namespace's ConfigMaps
// or Secrets had not synced in time ("failed to sync configmap cache: timed out waiting for the condition"):
// the kubelet mounts again on its next sync, so the Pod is on its way, not stopped at its volumes. Clean runs
// saw it on a new namespace's first Pods and on a Pod restored from an etcd snapshot.
func CacheNotSynced(e *corev1.Event) bool {
	return e.Reason == "FailedMount" && strings.Contains(e.Message, "failed to sync ") && strings.Contains(e.Message, " cache")
}

func checkSandbox(in Evidence) (finding, bool) {
	if PastSandbox(in.Pod) {
		return finding{}, false
	}
	e := in.podEvent(withReason("FailedCreatePodSandBox"))
	if e == nil {
		return finding{}, false
	}
	if containsAny(strings.ToLower(e.Message), "cni", "network", "failed to find plugin", "plugin type") {
		return finding{stage: Sandbox, detail: "the CNI plugin could not set up the Pod's network", evidence: eventLine(e)}, true
	}
	return finding{stage: Sandbox, detail: "the container runtime could not create the Pod sandbox", evidence: eventLine(e)}, true
}

// PastSandbox reports whether the kubelet got beyond volume and sandbox
// setup, which makes older mount and sandbox events stale.
func PastSandbox(pod *corev1.Pod) bool {
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
	return finding{stage: Kubelet, detail: fmt.Sprintf("the kubelet on %s has not started the Pod", node),
		evidence: "no container statuses reported", vars: map[string]string{"node": node}}, true
}

var (
	imageReasons      = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "ImageInspectError"}
	imageEventReasons = []string{"Failed", "InspectFailed", "ErrImageNeverPull"}
	// configReasons are the failures of startContainer's create and start
	// steps: generateContainerConfig, CreateContainer, StartContainer.
	configReasons = []string{"CreateContainerConfigError", "CreateContainerError", "RunContainerError", "PreCreateHookError", "PreStartHookError"}
)

// checkInit follows the init containers in order: each is pulled, created and
// run to completion before the next one starts.
func checkInit(in Evidence) (finding, bool) {
	pod := in.Pod
	for i, st := range pod.Status.InitContainerStatuses {
		// Init containers run one at a time, so i of them have completed.
		progress := fmt.Sprintf("Init:%d/%d: ", i, len(pod.Spec.InitContainers))
		vars := map[string]string{"container": st.Name}
		w := st.State.Waiting
		switch {
		case w != nil && slices.Contains(imageReasons, w.Reason):
			f := imageFinding(in, st)
			f.stage, f.detail, f.evidence = Init, "init "+f.detail, progress+f.evidence
			return f, true
		case w != nil && slices.Contains(configReasons, w.Reason):
			return finding{stage: Init, detail: fmt.Sprintf("init container %s could not be created", st.Name),
				evidence: progress + oneLine(w.Reason+": "+w.Message), vars: vars}, true
		case crashed(st):
			return finding{stage: Init, detail: fmt.Sprintf("init container %s fails", st.Name), evidence: progress + in.exitLine(st), vars: vars}, true
		case st.State.Running != nil && !isSidecar(pod, st.Name):
			line := fmt.Sprintf("init container %s is Running", st.Name)
			if last := in.LastLog[st.Name]; last != "" {
				line += ": last log line: " + last
			}
			return finding{stage: Init, detail: fmt.Sprintf("init container %s still running (waiting on something?)", st.Name),
				evidence: progress + line, vars: vars}, true
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

func checkImage(in Evidence) (finding, bool) {
	for _, st := range in.Pod.Status.ContainerStatuses {
		if w := st.State.Waiting; w != nil && slices.Contains(imageReasons, w.Reason) {
			return imageFinding(in, st), true
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
	return finding{stage: Image, detail: fmt.Sprintf("container %s cannot get image %s", st.Name, st.Image),
		evidence: oneLine(fmt.Sprintf("%s (image %q): %s", st.State.Waiting.Reason, st.Image, msg)),
		vars:     map[string]string{"container": st.Name}}
}

func checkCreate(in Evidence) (finding, bool) {
	for _, st := range in.Pod.Status.ContainerStatuses {
		if w := st.State.Waiting; w != nil && slices.Contains(configReasons, w.Reason) {
			return finding{stage: Container, detail: fmt.Sprintf("container %s could not be created or started", st.Name),
				evidence: oneLine(w.Reason + ": " + w.Message), vars: map[string]string{"container": st.Name}}, true
		}
	}
	return finding{}, false
}

func checkApp(in Evidence) (finding, bool) {
	for _, st := range in.Pod.Status.ContainerStatuses {
		if !crashed(st) {
			continue
		}
		detail := fmt.Sprintf("container %s crashes", st.Name)
		exited := st.State.Terminated != nil
		if exited {
			// restartPolicy Never or OnFailure's last try (a Job's Pod): it failed once, for good.
			detail = fmt.Sprintf("container %s failed", st.Name)
		}
		if t := lastExit(st); t != nil && t.Reason == "OOMKilled" {
			detail = fmt.Sprintf("container %s was OOMKilled (memory limit too low?)", st.Name)
		}
		if probe := in.liveness(st.Name); probe != nil {
			// The prober restarts it: the app ran, its probe is what fails.
			detail = fmt.Sprintf("container %s is restarted by its liveness probe", st.Name)
			return finding{stage: Readiness, detail: detail, evidence: eventLine(probe), vars: map[string]string{"container": st.Name}}, true
		}
		return finding{stage: App, detail: detail, evidence: in.exitLine(st), vars: map[string]string{"container": st.Name}, exited: exited}, true
	}
	return finding{}, false
}

// recentRestart is how long a restart of a container that runs again still
// says it is broken: longer than the kubelet's first back-offs, shorter than
// a fix takes to roll out and settle.
const recentRestart = 5 * time.Minute

// checkRestarts catches a container caught running between restarts: killed
// by its liveness probe, or crashed, within recentRestart.
func checkRestarts(in Evidence) (finding, bool) {
	if in.Now.IsZero() {
		return finding{}, false
	}
	for _, st := range in.Pod.Status.ContainerStatuses {
		t := st.LastTerminationState.Terminated
		if st.RestartCount == 0 || t == nil || in.Now.Sub(t.FinishedAt.Time) > recentRestart {
			continue
		}
		vars := map[string]string{"container": st.Name}
		if live := in.liveness(st.Name); live != nil {
			return finding{stage: Readiness, detail: fmt.Sprintf("container %s is restarted by its liveness probe (%d restarts)", st.Name, st.RestartCount),
				evidence: eventLine(live), vars: vars}, true
		}
		if t.ExitCode != 0 {
			return finding{stage: App, detail: fmt.Sprintf("container %s crashed and was restarted (%d restarts); it runs again for now", st.Name, st.RestartCount),
				evidence: in.exitLine(st), vars: vars}, true
		}
	}
	return finding{}, false
}

// liveness returns the kubelet's newest event saying why it restarted a
// container for its liveness probe: the probe's failure, which says why, else
// the kill.
func (in Evidence) liveness(container string) *corev1.Event {
	if e := in.podEvent(func(e *corev1.Event) bool {
		return e.Reason == "Unhealthy" && strings.HasPrefix(e.Message, "Liveness probe") &&
			(e.InvolvedObject.FieldPath == "" || strings.Contains(e.InvolvedObject.FieldPath, "{"+container+"}"))
	}); e != nil {
		return e
	}
	return in.podEvent(func(e *corev1.Event) bool {
		return e.Reason == "Killing" && strings.Contains(e.Message, "Container "+container+" failed liveness probe")
	})
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

// exitLine tells how a container exited: the kubelet's reason and code, its
// termination message, else the last line it logged.
func (in Evidence) exitLine(st corev1.ContainerStatus) string {
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
		switch {
		case t.Message != "":
			parts = append(parts, t.Message)
		case in.LastLog[st.Name] != "":
			parts = append(parts, "last log line: "+in.LastLog[st.Name])
		}
	}
	return oneLine(strings.Join(parts, ": "))
}

// checkWaiting catches containers still being set up without an error yet, so
// they are not misread as a readiness problem. Which step they wait in is the
// kubelet's: volumes and sandbox until the Pod is ready to start containers,
// then the init containers, then each app container's image and creation.
func checkWaiting(in Evidence) (finding, bool) {
	pod := in.Pod
	for _, st := range allStatuses(pod) {
		w := st.State.Waiting
		if w == nil {
			continue
		}
		line := fmt.Sprintf("container %s is waiting", st.Name)
		if w.Reason != "" {
			line = w.Reason + ": " + line
		}
		vars := map[string]string{"container": st.Name}
		c := podCondition(pod, corev1.PodReadyToStartContainers)
		switch {
		case c == nil || c.Status != corev1.ConditionTrue:
			stage, detail := Sandbox, "the kubelet is still creating the Pod's sandbox (no error yet)"
			if needsMount(pod) {
				stage, detail = Volumes, "the kubelet is still mounting the Pod's volumes or creating its sandbox (no error yet)"
			}
			return finding{stage: stage, detail: detail, evidence: line, vars: vars}, true
		case w.Reason == "PodInitializing" || isInit(pod, st.Name):
			return finding{stage: Init, detail: "the init containers have not completed yet", evidence: line, vars: vars}, true
		case in.podEvent(pulling(st.Image)) != nil:
			return finding{stage: Image, detail: fmt.Sprintf("container %s's image %s is still being pulled", st.Name, st.Image), evidence: line, vars: vars}, true
		}
		return finding{stage: Container, detail: fmt.Sprintf("container %s has not started yet", st.Name), evidence: line, vars: vars}, true
	}
	return finding{}, false
}

// pulling keeps the kubelet's "Pulling image" event for one image that no
// "Pulled" event has followed.
func pulling(image string) func(*corev1.Event) bool {
	return func(e *corev1.Event) bool {
		return e.Reason == "Pulling" && strings.Contains(e.Message, image)
	}
}

// needsMount reports volumes the kubelet waits for beyond the ServiceAccount
// token, which every Pod has and which mounts at once.
func needsMount(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil && v.EmptyDir == nil && v.DownwardAPI == nil {
			return true
		}
	}
	return false
}

func isInit(pod *corev1.Pod, name string) bool {
	return slices.ContainsFunc(pod.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == name })
}

func checkReadiness(in Evidence) (finding, bool) {
	pod := in.Pod
	// A completed Pod (e.g. a Job's) is never Ready, and need not be.
	if pod.Status.Phase == corev1.PodSucceeded {
		return finding{}, false
	}
	detail, container := "", ""
	for _, st := range pod.Status.ContainerStatuses {
		if !st.Ready {
			detail, container = fmt.Sprintf("container %s is Running but not Ready", st.Name), st.Name
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
	vars := map[string]string{}
	if container != "" {
		vars["container"] = container
	}
	probe := in.podEvent(func(e *corev1.Event) bool {
		return e.Reason == "Unhealthy" && strings.HasPrefix(e.Message, "Readiness probe")
	})
	if st := containerStatus(pod, container); st != nil && st.RestartCount > 0 {
		// Restarted since: the liveness probe, not readiness, is what keeps it down.
		if live := in.liveness(container); live != nil {
			return finding{stage: Readiness, detail: fmt.Sprintf("container %s is restarted by its liveness probe", container),
				evidence: eventLine(live), vars: vars}, true
		}
	}
	switch {
	case probe != nil:
		return finding{stage: Readiness, detail: detail, evidence: eventLine(probe), vars: vars}, true
	case condFalse:
		return finding{stage: Readiness, detail: detail, evidence: conditionLine(cond), vars: vars}, true
	}
	return finding{stage: Readiness, detail: detail, evidence: detail, vars: vars}, true
}

func allStatuses(pod *corev1.Pod) []corev1.ContainerStatus {
	return slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses)
}

func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}
