package journey

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// healthyPod is a Running, Ready Deployment Pod; cases mutate it into trouble.
func healthyPod(mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: "uid-web",
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-7d9c", Controller: ptrTo(true)}},
		},
		Spec: corev1.PodSpec{
			NodeName:   "worker",
			Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}},
			Volumes:    []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "web", Image: "nginx:1.27", Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			}},
		},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func ptrTo[T any](v T) *T { return &v }

func readyNode() *corev1.Node {
	return node(corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status")
}

func node(status corev1.ConditionStatus, reason, msg string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "worker"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: status, Reason: reason, Message: msg},
		}},
	}
}

func podEvent(reason, msg string, sec int) corev1.Event {
	return corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", UID: "uid-web"},
		Reason:         reason,
		Message:        msg,
		LastTimestamp:  metav1.NewTime(t0.Add(time.Duration(sec) * time.Second)),
	}
}

func claimEvent(claim, reason, msg string) corev1.Event {
	return corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "PersistentVolumeClaim", Name: claim},
		Reason:         reason,
		Message:        msg,
		LastTimestamp:  metav1.NewTime(t0),
	}
}

func pendingClaim(name string) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
}

func unscheduled(p *corev1.Pod) {
	p.Spec.NodeName = ""
	p.Status = corev1.PodStatus{Phase: corev1.PodPending}
}

// creating leaves the Pod before its sandbox exists.
func creating(p *corev1.Pod) {
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse},
	}
	waiting("ContainerCreating", "")(p)
}

func waiting(reason, msg string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		st := &p.Status.ContainerStatuses[0]
		st.Ready = false
		st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	}
}

func exitedBefore(reason string, code int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code},
		}
	}
}

func notReady(p *corev1.Pod) {
	p.Status.ContainerStatuses[0].Ready = false
	p.Status.Conditions[2] = corev1.PodCondition{
		Type: corev1.PodReady, Status: corev1.ConditionFalse,
		Reason: "ContainersNotReady", Message: "containers with unready status: [web]",
	}
}

// withInit adds one init container in the given state; the app container waits on it.
func withInit(state corev1.ContainerState, restart *corev1.ContainerRestartPolicy) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "wait-db", Image: "busybox:1.36", RestartPolicy: restart}}
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "wait-db", Image: "busybox:1.36", State: state}}
		if restart == nil {
			p.Status.Phase = corev1.PodPending
			waiting("PodInitializing", "")(p)
		}
	}
}

func TestTrace(t *testing.T) {
	forbidden := `pods "web" is forbidden: User "jane" cannot create resource "pods" in API group "" in the namespace "default"`
	tests := []struct {
		name     string
		in       Evidence
		stage    Stage
		evidence string
		detail   string
	}{
		{
			name:     "rbac forbidden",
			in:       Evidence{APIError: "Error from server (Forbidden): " + forbidden},
			stage:    Authorization,
			evidence: "Error from server (Forbidden): " + forbidden,
			detail:   "RBAC does not allow this request",
		},
		{
			name:     "unauthorized",
			in:       Evidence{APIError: "error: You must be logged in to the server (Unauthorized)"},
			stage:    Authentication,
			evidence: "error: You must be logged in to the server (Unauthorized)",
		},
		{
			name:     "bad client certificate",
			in:       Evidence{APIError: "Unable to connect to the server: x509: certificate signed by unknown authority"},
			stage:    Authentication,
			evidence: "Unable to connect to the server: x509: certificate signed by unknown authority",
		},
		{
			name:     "webhook denied",
			in:       Evidence{APIError: `admission webhook "deny.example.com" denied the request: no latest tags`},
			stage:    Admission,
			evidence: `admission webhook "deny.example.com" denied the request: no latest tags`,
		},
		{
			name:     "webhook unreachable over TLS is admission, not authentication",
			in:       Evidence{APIError: `Internal error occurred: failed calling webhook "v.example.com": tls: failed to verify certificate: x509: certificate signed by unknown authority`},
			stage:    Admission,
			evidence: `Internal error occurred: failed calling webhook "v.example.com": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
		},
		{
			name:     "quota",
			in:       Evidence{APIError: `pods "web" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=1, limited: cpu=2`},
			stage:    Admission,
			evidence: `pods "web" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=1, limited: cpu=2`,
		},
		{
			name:     "limitrange",
			in:       Evidence{APIError: `pods "web" is forbidden: maximum cpu usage per Container is 500m, but limit is 1`},
			stage:    Admission,
			evidence: `pods "web" is forbidden: maximum cpu usage per Container is 500m, but limit is 1`,
		},
		{
			name:     "pod security",
			in:       Evidence{APIError: `pods "web" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`},
			stage:    Admission,
			evidence: `pods "web" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`,
		},
		{
			name:     "requests above limits",
			in:       Evidence{APIError: "spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1"},
			stage:    Admission,
			evidence: `spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
		},
		{
			name:     "forbidden by an admission plugin",
			in:       Evidence{APIError: `pods "web" is forbidden: error looking up service account default/app: serviceaccount "app" not found`},
			stage:    Admission,
			evidence: `pods "web" is forbidden: error looking up service account default/app: serviceaccount "app" not found`,
		},
		{
			name:     "etcd down",
			in:       Evidence{APIError: "Error from server: etcdserver: request timed out\n"},
			stage:    Persistence,
			evidence: "Error from server: etcdserver: request timed out",
			detail:   "the API server could not store the object",
		},
		{
			name: "no pod, replicaset blocked by quota",
			in: Evidence{OwnerEvents: []corev1.Event{
				podEvent("SuccessfulCreate", "Created pod: web-1", 0),
				podEvent("FailedCreate", `Error creating: pods "web-2" is forbidden: exceeded quota: pods`, 5),
			}},
			stage:    Admission,
			evidence: `FailedCreate: Error creating: pods "web-2" is forbidden: exceeded quota: pods`,
			detail:   "the controller could not create the Pod: an admission controller rejected the object",
		},
		{
			name: "no pod, replicaset's service account lacks rbac",
			in: Evidence{OwnerEvents: []corev1.Event{
				podEvent("FailedCreate", `Error creating: pods is forbidden: User "system:serviceaccount:kube-system:replicaset-controller" cannot create resource "pods"`, 0),
			}},
			stage:    Authorization,
			evidence: `FailedCreate: Error creating: pods is forbidden: User "system:serviceaccount:kube-system:replicaset-controller" cannot create resource "pods"`,
		},
		{
			name:     "no pod and no evidence",
			in:       Evidence{},
			stage:    Controllers,
			evidence: "no Pod exists",
			detail:   "no Pod was created (is kube-controller-manager running?)",
		},
		{
			name: "unscheduled with unbound claim",
			in: Evidence{
				Pod: healthyPod(unscheduled),
				PVCs: []corev1.PersistentVolumeClaim{
					{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}},
					pendingClaim("data"),
				},
				Events: []corev1.Event{
					podEvent("FailedScheduling", "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.", 0),
					claimEvent("data", "ProvisioningFailed", `storageclass.storage.k8s.io "fast" not found`),
				},
			},
			stage:    Volumes,
			evidence: `ProvisioningFailed: storageclass.storage.k8s.io "fast" not found`,
			detail:   "claim data is not bound",
		},
		{
			name: "claim waiting for first consumer leaves it to the scheduler",
			in: Evidence{
				Pod:  healthyPod(unscheduled),
				PVCs: []corev1.PersistentVolumeClaim{pendingClaim("data")},
				Events: []corev1.Event{
					claimEvent("data", "WaitForFirstConsumer", "waiting for first consumer to be created before binding"),
					podEvent("FailedScheduling", "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}.", 0),
				},
			},
			stage:    Scheduling,
			evidence: "FailedScheduling: 0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}.",
		},
		{
			name: "scheduling, newest event wins",
			in: Evidence{Pod: healthyPod(unscheduled), Events: []corev1.Event{
				podEvent("FailedScheduling", "0/2 nodes are available: 2 Insufficient cpu.", 60),
				podEvent("FailedScheduling", "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) didn't match Pod's node affinity/selector.", 120),
				podEvent("FailedScheduling", "0/2 nodes are available: 2 node(s) were unschedulable.", 0),
			}},
			stage:    Scheduling,
			evidence: "FailedScheduling: 0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) didn't match Pod's node affinity/selector.",
			detail:   "the scheduler found no node for the Pod",
		},
		{
			name: "scheduling from condition",
			in: Evidence{Pod: healthyPod(unscheduled, func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{{
					Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
					Message: "0/1 nodes are available: 1 Insufficient memory.",
				}}
			})},
			stage:    Scheduling,
			evidence: "PodScheduled=False (Unschedulable): 0/1 nodes are available: 1 Insufficient memory.",
		},
		{
			name:     "no scheduler",
			in:       Evidence{Pod: healthyPod(unscheduled)},
			stage:    Scheduling,
			evidence: "no PodScheduled condition and no FailedScheduling event",
			detail:   "no scheduling decision yet (is kube-scheduler running?)",
		},
		{
			name: "missing claim blocks scheduling",
			in: Evidence{Pod: healthyPod(unscheduled), Events: []corev1.Event{
				podEvent("FailedScheduling", `0/2 nodes are available: persistentvolumeclaim "data" not found.`, 0),
			}},
			stage:    Volumes,
			evidence: `FailedScheduling: 0/2 nodes are available: persistentvolumeclaim "data" not found.`,
		},
		{
			name:     "node stopped reporting",
			in:       Evidence{Pod: healthyPod(creating), Node: node(corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.")},
			stage:    Kubelet,
			evidence: "node worker Ready=Unknown (NodeStatusUnknown): Kubelet stopped posting node status.",
			detail:   "node worker is NotReady",
		},
		{
			name: "node not ready because of cni",
			in: Evidence{Pod: healthyPod(creating), Node: node(corev1.ConditionFalse, "KubeletNotReady",
				"container runtime network not ready: SandboxReady=false reason:SandboxPluginNotReady message:Sandbox plugin returns error: cni plugin not initialized")},
			stage:    Sandbox,
			evidence: "node worker Ready=False (KubeletNotReady): container runtime network not ready: SandboxReady=false reason:SandboxPluginNotReady message:Sandbox plugin returns error: cni plugin not initialized",
		},
		{
			name:     "node not ready because containerd is down",
			in:       Evidence{Pod: healthyPod(creating), Node: node(corev1.ConditionFalse, "KubeletNotReady", "container runtime is down")},
			stage:    Sandbox,
			evidence: "node worker Ready=False (KubeletNotReady): container runtime is down",
		},
		{
			name:     "node never reported Ready",
			in:       Evidence{Pod: healthyPod(creating), Node: &corev1.Node{}},
			stage:    Kubelet,
			evidence: "node worker has no Ready condition",
		},
		{
			name:     "nodeName matches no node",
			in:       Evidence{Pod: healthyPod(creating)},
			stage:    Kubelet,
			evidence: `spec.nodeName "worker" matches no Node`,
		},
		{
			name: "kubelet rejects pod",
			in: Evidence{Node: readyNode(), Pod: healthyPod(func(p *corev1.Pod) {
				p.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "OutOfcpu",
					Message: "Pod was rejected: Node didn't have enough resource: cpu"}
			})},
			stage:    Kubelet,
			evidence: "OutOfcpu: Pod was rejected: Node didn't have enough resource: cpu",
		},
		{
			name:     "kubelet has not picked the pod up",
			in:       Evidence{Node: readyNode(), Pod: healthyPod(func(p *corev1.Pod) { p.Status.ContainerStatuses = nil })},
			stage:    Kubelet,
			evidence: "no container statuses reported",
		},
		{
			name: "sandbox fails in cni",
			in: Evidence{Node: readyNode(), Pod: healthyPod(creating), Events: []corev1.Event{
				podEvent("FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="bridge" failed (add): failed to find plugin "bridge" in path [/opt/cni/bin]`, 0),
			}},
			stage:    Sandbox,
			evidence: `FailedCreatePodSandBox: Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="bridge" failed (add): failed to find plugin "bridge" in path [/opt/cni/bin]`,
		},
		{
			name: "sandbox fails in runtime",
			in: Evidence{Node: readyNode(), Pod: healthyPod(creating), Events: []corev1.Event{
				podEvent("FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "gvisor" is configured`, 0),
			}},
			stage:    Sandbox,
			evidence: `FailedCreatePodSandBox: Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "gvisor" is configured`,
		},
		{
			name: "mount fails",
			in: Evidence{Node: readyNode(), Pod: healthyPod(creating), Events: []corev1.Event{
				podEvent("FailedMount", `MountVolume.SetUp failed for volume "config" : configmap "app-config" not found`, 0),
			}},
			stage:    Volumes,
			evidence: `FailedMount: MountVolume.SetUp failed for volume "config" : configmap "app-config" not found`,
			detail:   "the kubelet could not attach or mount a volume",
		},
		{
			name: "a mount that waits for the kubelet's cache is on its way",
			in: Evidence{Node: readyNode(), Pod: healthyPod(creating), Events: []corev1.Event{
				podEvent("FailedMount", `MountVolume.SetUp failed for volume "kube-api-access-dvq4w" : failed to sync configmap cache: timed out waiting for the condition`, 0),
			}},
			stage:    Sandbox,
			evidence: "ContainerCreating: container web is waiting",
		},
		{
			name:     "scheduled with unbound claim",
			in:       Evidence{Node: readyNode(), Pod: healthyPod(creating), PVCs: []corev1.PersistentVolumeClaim{pendingClaim("data")}},
			stage:    Volumes,
			evidence: "PersistentVolumeClaim data is not Bound",
		},
		{
			name: "init crash loop",
			in: Evidence{Node: readyNode(), Pod: healthyPod(withInit(corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"},
			}, nil), func(p *corev1.Pod) {
				p.Status.InitContainerStatuses[0].LastTerminationState = corev1.ContainerState{
					Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1},
				}
			})},
			stage:    Init,
			evidence: "Init:0/1: CrashLoopBackOff: container wait-db exited Error (exit code 1)",
			detail:   "init container wait-db fails",
		},
		{
			name: "init exited non-zero",
			in: Evidence{Node: readyNode(), Pod: healthyPod(withInit(corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Message: "nslookup: can't resolve 'db'"},
			}, nil))},
			stage:    Init,
			evidence: "Init:0/1: container wait-db exited (exit code 2): nslookup: can't resolve 'db'",
		},
		{
			name: "init still running",
			in: Evidence{Node: readyNode(), Pod: healthyPod(withInit(corev1.ContainerState{
				Running: &corev1.ContainerStateRunning{},
			}, nil))},
			stage:    Init,
			evidence: "Init:0/1: init container wait-db is Running",
			detail:   "init container wait-db still running (waiting on something?)",
		},
		{
			name: "init still running says what it waits for",
			in: Evidence{Node: readyNode(), LastLog: map[string]string{"wait-db": "nslookup: can't resolve 'db'"}, Pod: healthyPod(withInit(corev1.ContainerState{
				Running: &corev1.ContainerStateRunning{},
			}, nil))},
			stage:    Init,
			evidence: "Init:0/1: init container wait-db is Running: last log line: nslookup: can't resolve 'db'",
		},
		{
			name: "an init container's image stops the init stage",
			in: Evidence{Node: readyNode(), Pod: healthyPod(withInit(corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "busybox:1.36"`},
			}, nil))},
			stage:    Init,
			evidence: `Init:0/1: ImagePullBackOff (image "busybox:1.36"): Back-off pulling image "busybox:1.36"`,
		},
		{
			name: "image pull, newest Failed event wins",
			in: Evidence{Node: readyNode(), Pod: healthyPod(waiting("ImagePullBackOff", `Back-off pulling image "nginx:1.27"`)), Events: []corev1.Event{
				podEvent("Failed", `Failed to pull image "nginx:1.27": rpc error: code = Unknown desc = dial tcp: i/o timeout`, 0),
				podEvent("Failed", `Failed to pull image "nginx:1.27": rpc error: code = NotFound desc = not found`, 30),
				podEvent("Failed", "Error: ImagePullBackOff", 40),
				podEvent("BackOff", `Back-off pulling image "nginx:1.27"`, 50),
			}},
			stage:    Image,
			evidence: `ImagePullBackOff (image "nginx:1.27"): Failed to pull image "nginx:1.27": rpc error: code = NotFound desc = not found`,
			detail:   "container web cannot get image nginx:1.27",
		},
		{
			name: "sandbox event is stale once an image is being pulled",
			in: Evidence{Node: readyNode(), Pod: healthyPod(waiting("ErrImagePull", "not found"), func(p *corev1.Pod) {
				p.Status.Conditions = p.Status.Conditions[:1]
			}), Events: []corev1.Event{
				podEvent("FailedCreatePodSandBox", "failed to setup network for sandbox", 0),
			}},
			stage:    Image,
			evidence: `ErrImagePull (image "nginx:1.27"): not found`,
		},
		{
			name:     "invalid image name",
			in:       Evidence{Node: readyNode(), Pod: healthyPod(waiting("InvalidImageName", `Failed to apply default image tag "nginx:1.27": couldn't parse image name`))},
			stage:    Image,
			evidence: `InvalidImageName (image "nginx:1.27"): Failed to apply default image tag "nginx:1.27": couldn't parse image name`,
		},
		{
			name:     "missing secret for env",
			in:       Evidence{Node: readyNode(), Pod: healthyPod(waiting("CreateContainerConfigError", `secret "db-pass" not found`))},
			stage:    Container,
			evidence: `CreateContainerConfigError: secret "db-pass" not found`,
			detail:   "container web could not be created or started",
		},
		{
			name:     "run container error",
			in:       Evidence{Node: readyNode(), Pod: healthyPod(waiting("RunContainerError", `exec: "nginxx": executable file not found in $PATH`))},
			stage:    Container,
			evidence: `RunContainerError: exec: "nginxx": executable file not found in $PATH`,
		},
		{
			name:     "crash loop",
			in:       Evidence{Node: readyNode(), Pod: healthyPod(waiting("CrashLoopBackOff", "back-off 40s"), exitedBefore("Error", 1))},
			stage:    App,
			evidence: "CrashLoopBackOff: container web exited Error (exit code 1)",
			detail:   "container web crashes",
		},
		{
			name:     "oom killed while running again",
			in:       Evidence{Node: readyNode(), Pod: healthyPod(exitedBefore("OOMKilled", 137))},
			stage:    App,
			evidence: "container web exited OOMKilled (exit code 137)",
			detail:   "container web was OOMKilled (memory limit too low?)",
		},
		{
			name: "terminated with error",
			in: Evidence{Node: readyNode(), Pod: healthyPod(func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodFailed
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{
					Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 3},
				}
			})},
			stage:    App,
			evidence: "container web exited Error (exit code 3)",
		},
		{
			name: "running again after its liveness probe killed it",
			in: Evidence{Node: readyNode(), Now: t0.Add(time.Minute), Pod: healthyPod(func(p *corev1.Pod) {
				st := &p.Status.ContainerStatuses[0]
				st.RestartCount = 3
				st.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed", FinishedAt: metav1.NewTime(t0)}
			}), Events: []corev1.Event{
				podEvent("Killing", "Container web failed liveness probe, will be restarted", 10),
				podEvent("Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 404", 8),
			}},
			stage:    Readiness,
			evidence: "Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 404",
			detail:   "container web is restarted by its liveness probe (3 restarts)",
		},
		{
			name: "running again after a crash",
			in: Evidence{Node: readyNode(), Now: t0.Add(time.Minute), LastLog: map[string]string{"web": "panic: no config"}, Pod: healthyPod(func(p *corev1.Pod) {
				st := &p.Status.ContainerStatuses[0]
				st.RestartCount = 1
				st.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2, FinishedAt: metav1.NewTime(t0)}
			})},
			stage:    App,
			evidence: "container web exited Error (exit code 2): last log line: panic: no config",
		},
		{
			name: "an old restart no longer counts",
			in: Evidence{Node: readyNode(), Now: t0.Add(time.Hour), Pod: healthyPod(func(p *corev1.Pod) {
				st := &p.Status.ContainerStatuses[0]
				st.RestartCount = 1
				st.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2, FinishedAt: metav1.NewTime(t0)}
			})},
		},
		{
			name: "a failed job pod is not restarted: its logs are current",
			in: Evidence{Node: readyNode(), Pod: healthyPod(func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodFailed
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 3}}
			})},
			stage:    App,
			evidence: "container web exited Error (exit code 3)",
			detail:   "container web failed",
		},
		{
			name:     "still creating, no error yet",
			in:       Evidence{Node: readyNode(), Pod: healthyPod(creating)},
			stage:    Sandbox,
			evidence: "ContainerCreating: container web is waiting",
		},
		{
			name: "readiness probe failing",
			in: Evidence{Node: readyNode(), Pod: healthyPod(notReady), Events: []corev1.Event{
				podEvent("Unhealthy", "Liveness probe failed: timeout", 50),
				podEvent("Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", 10),
				podEvent("Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 404", 20),
			}},
			stage:    Readiness,
			evidence: "Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 404",
			detail:   "container web is Running but not Ready",
		},
		{
			name:     "not ready without probe events",
			in:       Evidence{Node: readyNode(), Pod: healthyPod(notReady)},
			stage:    Readiness,
			evidence: "Ready=False (ContainersNotReady): containers with unready status: [web]",
		},
		{
			name: "readiness gate not met",
			in: Evidence{Node: readyNode(), Pod: healthyPod(func(p *corev1.Pod) {
				p.Status.Conditions[2] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ReadinessGatesNotReady"}
			})},
			stage:    Readiness,
			evidence: "Ready=False (ReadinessGatesNotReady)",
			detail:   "the Pod is Running but not Ready",
		},
		{
			name: "container not ready without a Ready condition",
			in: Evidence{Node: readyNode(), Pod: healthyPod(notReady, func(p *corev1.Pod) {
				p.Status.Conditions = p.Status.Conditions[:2]
			})},
			stage:    Readiness,
			evidence: "container web is Running but not Ready",
		},
		{
			name:     "service without endpoints",
			in:       Evidence{Node: readyNode(), Pod: healthyPod(), Service: &ServiceInfo{Name: "web"}},
			stage:    Service,
			evidence: "Service web has 0 ready endpoints",
		},
		{
			name: "all passed despite stale events",
			in: Evidence{Node: readyNode(), Pod: healthyPod(), Service: &ServiceInfo{Name: "web", ReadyEndpoints: 2},
				Events: []corev1.Event{
					podEvent("FailedScheduling", "0/2 nodes are available: 2 Insufficient cpu.", 0),
					podEvent("FailedMount", `MountVolume.SetUp failed for volume "config"`, 10),
					podEvent("FailedCreatePodSandBox", "failed to setup network for sandbox", 20),
				}},
		},
		{
			name: "events of an earlier pod with the same name are ignored",
			in: Evidence{Node: readyNode(), Pod: healthyPod(creating), Events: []corev1.Event{
				func() corev1.Event {
					e := podEvent("FailedMount", "old pod", 0)
					e.InvolvedObject.UID = "uid-old"
					return e
				}(),
			}},
			stage:    Sandbox,
			evidence: "ContainerCreating: container web is waiting",
		},
		{
			name: "running sidecar init container is not stuck",
			in: Evidence{Node: readyNode(), Pod: healthyPod(withInit(corev1.ContainerState{
				Running: &corev1.ContainerStateRunning{},
			}, ptrTo(corev1.ContainerRestartPolicyAlways)), func(p *corev1.Pod) {
				p.Status.InitContainerStatuses[0].Ready = true
			})},
		},
		{
			name: "completed job pod",
			in: Evidence{Node: readyNode(), Pod: healthyPod(func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodSucceeded
				p.Status.Conditions[2].Status = corev1.ConditionFalse
				p.Status.ContainerStatuses[0].Ready = false
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{
					Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"},
				}
			})},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Trace(tc.in)
			if r.Stopped != tc.stage {
				t.Fatalf("Stopped = %q, want %q (evidence %q)", r.Stopped, tc.stage, r.Evidence)
			}
			if r.Evidence != tc.evidence {
				t.Errorf("Evidence =\n  %q\nwant\n  %q", r.Evidence, tc.evidence)
			}
			if tc.detail != "" {
				if got := r.Handoffs[tc.stage.Index()].Detail; got != tc.detail {
					t.Errorf("Detail = %q, want %q", got, tc.detail)
				}
			}
		})
	}
}

func TestTraceHandoffStatuses(t *testing.T) {
	tests := []struct {
		name string
		in   Evidence
		want map[Stage]Status
	}{
		{
			name: "stopped at scheduling",
			in:   Evidence{Pod: healthyPod(unscheduled)},
			want: map[Stage]Status{
				Authentication: Passed, Authorization: Passed, Admission: Passed, Persistence: Passed,
				Controllers: Passed, Scheduling: Failed, Kubelet: NotReached, Volumes: NotReached,
				Sandbox: NotReached, Init: NotReached, Image: NotReached, Container: NotReached, App: NotReached,
				Readiness: NotReached, Service: NotReached, NetworkPolicy: NotReached, DNS: NotReached, APIAccess: NotReached,
			},
		},
		{
			name: "bare hostNetwork pod without volumes or service passes",
			in: Evidence{Node: readyNode(), Pod: healthyPod(func(p *corev1.Pod) {
				p.OwnerReferences = nil
				p.Spec.HostNetwork = true
				p.Spec.Volumes = nil
			})},
			want: map[Stage]Status{
				Authentication: Passed, Authorization: Passed, Admission: Passed, Persistence: Passed,
				Controllers: Skipped, Scheduling: Passed, Kubelet: Passed, Volumes: Skipped,
				Sandbox: Passed, Init: Skipped, Image: Passed, Container: Passed, App: Passed,
				Readiness: Passed, Service: Skipped, NetworkPolicy: Skipped, DNS: Skipped, APIAccess: Skipped,
			},
		},
		{
			name: "no pod stops before scheduling",
			in:   Evidence{APIError: "etcdserver: leader changed"},
			want: map[Stage]Status{
				Authentication: Passed, Authorization: Passed, Admission: Passed, Persistence: Failed,
				Controllers: NotReached, Scheduling: NotReached, Kubelet: NotReached, Volumes: NotReached,
				Sandbox: NotReached, Init: NotReached, Image: NotReached, Container: NotReached, App: NotReached,
				Readiness: NotReached, Service: NotReached, NetworkPolicy: NotReached, DNS: NotReached, APIAccess: NotReached,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Trace(tc.in)
			if len(r.Handoffs) != len(Stages()) {
				t.Fatalf("got %d handoffs, want %d", len(r.Handoffs), len(Stages()))
			}
			for i, h := range r.Handoffs {
				if h.Stage != Stages()[i] {
					t.Errorf("handoff %d is %q, want %q", i, h.Stage, Stages()[i])
				}
				if h.Status != tc.want[h.Stage] {
					t.Errorf("%s: status %q, want %q", h.Stage, h.Status, tc.want[h.Stage])
				}
				if h.Status == Skipped && strings.TrimSpace(h.Detail) == "" {
					t.Errorf("%s: skipped without a reason", h.Stage)
				}
			}
		})
	}
}

func TestNewestEventUsesSeriesAndEventTime(t *testing.T) {
	old := podEvent("FailedScheduling", "old", 100)
	series := podEvent("FailedScheduling", "series", 0)
	series.Series = &corev1.EventSeries{LastObservedTime: metav1.NewMicroTime(t0.Add(200 * time.Second))}
	micro := corev1.Event{Reason: "FailedScheduling", Message: "eventTime", EventTime: metav1.NewMicroTime(t0.Add(150 * time.Second))}

	r := Trace(Evidence{Pod: healthyPod(unscheduled), Events: []corev1.Event{series, old, micro}})
	if r.Evidence != "FailedScheduling: series" {
		t.Errorf("Evidence = %q, want the series event", r.Evidence)
	}
	r = Trace(Evidence{Pod: healthyPod(unscheduled), Events: []corev1.Event{old, micro}})
	if r.Evidence != "FailedScheduling: eventTime" {
		t.Errorf("Evidence = %q, want the events.k8s.io event", r.Evidence)
	}
	first := corev1.Event{Reason: "FailedScheduling", Message: "first", FirstTimestamp: metav1.NewTime(t0.Add(300 * time.Second))}
	r = Trace(Evidence{Pod: healthyPod(unscheduled), Events: []corev1.Event{first, old, micro}})
	if r.Evidence != "FailedScheduling: first" {
		t.Errorf("Evidence = %q, want the event with only firstTimestamp", r.Evidence)
	}
}

func TestCommandsCarryTheTracedNames(t *testing.T) {
	failed := func(r Result) Handoff {
		t.Helper()
		for _, h := range r.Handoffs {
			if h.Status == Failed {
				return h
			}
		}
		t.Fatalf("no failed handoff in %+v", r)
		return Handoff{}
	}
	crash := Trace(Evidence{Node: readyNode(), Pod: healthyPod(waiting("CrashLoopBackOff", ""), exitedBefore("Error", 1))})
	if got := failed(crash).Commands[0]; got != "kubectl logs web -c web --previous -n default" {
		t.Errorf("crash loop: %q", got)
	}
	job := Trace(Evidence{Node: readyNode(), Pod: healthyPod(func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
	})})
	if got := failed(job).Commands[0]; got != "kubectl logs web -c web -n default" {
		t.Errorf("a container that is not restarted has no --previous: %q", got)
	}
	ds := Trace(Evidence{Workload: &Workload{Kind: "daemonset", Name: "agent", Namespace: "ops", Why: "desires 0 Pods"}})
	h := failed(ds)
	if h.Stage != Scheduling || h.Commands[0] != "kubectl describe daemonset agent -n ops" {
		t.Errorf("a workload without a Pod points at the workload: %+v", h)
	}
	for _, c := range h.Commands {
		if strings.Contains(c, "<pod>") || strings.Contains(c, "<namespace>") {
			t.Errorf("unfilled placeholder in %q", c)
		}
	}
}
