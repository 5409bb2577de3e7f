// Package journey models the path a Pod takes from kubectl to Running + Ready,
// works out from cluster evidence the first handoff where it stopped, and
// draws that path as the course's whiteboard chain.
package journey

import (
	"fmt"
	"strings"
)

// Stage is one handoff on the Pod's journey.
type Stage string

// The stages in journey order. Controllers sit before scheduling because a
// controller has to create the Pod before the scheduler can place it.
//
// From kubelet on, the order is the kubelet's own (Kubernetes v1.35,
// pkg/kubelet/kubelet.go and pkg/kubelet/kuberuntime): Kubelet.SyncPod waits in
// volumeManager.WaitForAttachAndMount before it calls the runtime's SyncPod;
// kubeGenericRuntimeManager.SyncPod then runs createPodSandbox (RunPodSandbox,
// which sets up the network through CNI), starts the init containers one at a
// time (Step 6) and then the app containers (Step 8); startContainer, for each
// of them, pulls the image (imagePuller.EnsureImageExists), builds the config
// and creates the container (generateContainerConfig, CreateContainer), then
// starts it (StartContainer). An app container's image is therefore pulled
// only once every init container has completed. Readiness comes from the
// prober once the container runs; the stages after it are what the Running
// and Ready Pod meets when it serves and calls out.
const (
	Authentication Stage = "authentication"
	Authorization  Stage = "authorization"
	Admission      Stage = "admission"
	Persistence    Stage = "persistence"
	Controllers    Stage = "controllers"
	Scheduling     Stage = "scheduling"
	Kubelet        Stage = "kubelet"
	Volumes        Stage = "volumes"
	Sandbox        Stage = "sandbox"
	Init           Stage = "init"
	Image          Stage = "image"
	Container      Stage = "container"
	App            Stage = "app"
	Readiness      Stage = "readiness"
	Service        Stage = "service"
	NetworkPolicy  Stage = "networkpolicy"
	DNS            Stage = "dns"
	APIAccess      Stage = "api-access"
)

type stageInfo struct {
	stage    Stage
	title    string
	commands []string
}

// catalog is the single source of order, titles and investigate commands. The
// commands' <placeholders> are filled in from the traced Pod where it is known.
var catalog = []stageInfo{
	{Authentication, "authentication", []string{
		"kubectl config view --minify",
		"kubectl auth whoami",
		"openssl x509 -in <client.crt> -noout -subject -issuer -dates",
	}},
	{Authorization, "authorization (RBAC)", []string{
		"kubectl auth can-i <verb> <resource> --as <user> -n <namespace>",
		"kubectl get rolebindings,clusterrolebindings -A -o wide",
		"kubectl describe role <role> -n <namespace>",
	}},
	{Admission, "admission (mutating, validating)", []string{
		"kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations",
		"kubectl describe resourcequota,limitrange -n <namespace>",
		"kubectl get namespace <namespace> --show-labels",
	}},
	{Persistence, "persistence (API server, etcd)", []string{
		"kubectl get --raw='/readyz?verbose'",
		"kubectl -n kube-system get pods -l tier=control-plane",
		"crictl ps -a   # on the control-plane node; check /etc/kubernetes/manifests",
	}},
	{Controllers, "controllers (controller-manager)", []string{
		"kubectl get deploy,rs,pods -n <namespace>",
		"kubectl describe rs -n <namespace>",
		"kubectl -n kube-system get pods -l component=kube-controller-manager",
	}},
	{Scheduling, "scheduling (filter, score, bind)", []string{
		"kubectl describe pod <pod> -n <namespace>",
		"kubectl describe nodes | grep -A3 -i taints",
		"kubectl -n kube-system get pods -l component=kube-scheduler",
	}},
	{Kubelet, "kubelet (node)", []string{
		"kubectl get nodes",
		"kubectl describe node <node>",
		"systemctl status kubelet; journalctl -u kubelet -n 50   # on the node",
	}},
	{Volumes, "volumes (claim, attach, mount)", []string{
		"kubectl describe pod <pod> -n <namespace>   # Events: FailedMount",
		"kubectl get pvc,configmap,secret -n <namespace>",
		"kubectl describe pvc -n <namespace>; kubectl get storageclass",
	}},
	{Sandbox, "sandbox and network (CRI, CNI)", []string{
		"kubectl describe pod <pod> -n <namespace>   # Events: FailedCreatePodSandBox",
		"systemctl status containerd; crictl pods   # on the node",
		"ls /etc/cni/net.d /opt/cni/bin; journalctl -u kubelet | grep -i cni   # on the node",
	}},
	{Init, "init containers (pull, run)", []string{
		"kubectl logs <pod> -c <container> -n <namespace>",
		"kubectl describe pod <pod> -n <namespace>",
	}},
	{Image, "image pull (app containers)", []string{
		"kubectl describe pod <pod> -n <namespace>   # Events: Failed to pull image",
		"kubectl get pod <pod> -n <namespace> -o jsonpath='{.spec.containers[*].image}'",
		"crictl images   # on the node",
	}},
	{Container, "container create and start", []string{
		"kubectl describe pod <pod> -n <namespace>   # State: Waiting, Reason",
		"kubectl get configmap,secret -n <namespace>",
	}},
	{App, "app container running", []string{
		"kubectl logs <pod> -c <container> --previous -n <namespace>",
		"kubectl describe pod <pod> -n <namespace>   # Last State, Exit Code",
	}},
	{Readiness, "readiness (probes)", []string{
		"kubectl describe pod <pod> -n <namespace>   # Events: Unhealthy",
		"kubectl get pod <pod> -n <namespace> -o jsonpath='{.spec.containers[*].readinessProbe}'",
		"kubectl get pod <pod> -n <namespace> -o jsonpath='{.spec.containers[*].livenessProbe}'",
	}},
	{Service, "service (endpoints, ports)", []string{
		"kubectl describe service <service> -n <namespace>",
		"kubectl get endpointslices -n <namespace> -l kubernetes.io/service-name=<service>",
		"kubectl get pod <pod> -n <namespace> -o jsonpath='{.spec.containers[*].ports}'",
		"kubectl -n kube-system get pods -l k8s-app=kube-proxy -o wide",
	}},
	{NetworkPolicy, "network policy", []string{
		"kubectl get networkpolicy -n <namespace>",
		"kubectl describe networkpolicy -n <namespace>",
		"kubectl get pods -A --show-labels; kubectl get ns --show-labels",
	}},
	{DNS, "DNS (cluster names)", []string{
		"kubectl exec <pod> -n <namespace> -- cat /etc/resolv.conf",
		"kubectl -n kube-system get deploy,pods,endpointslices -l k8s-app=kube-dns",
		"kubectl run dns-test --rm -it --image=busybox:1.36 --restart=Never -- nslookup kubernetes.default",
	}},
	{APIAccess, "API access (ServiceAccount)", []string{
		"kubectl logs <pod> -c <container> -n <namespace>",
		"kubectl auth can-i --list --as system:serviceaccount:<namespace>:<serviceaccount> -n <namespace>",
		"kubectl get rolebindings,clusterrolebindings -A -o wide | grep <serviceaccount>",
	}},
}

// aliases are the names learners use for a stage. "runtime", "network" and
// "storage" were stages of their own before the journey followed the
// kubelet's order; they name the stage that now holds what they meant.
var aliases = map[string]Stage{
	"authn":              Authentication,
	"rbac":               Authorization,
	"authz":              Authorization,
	"etcd":               Persistence,
	"api":                Persistence,
	"apiserver":          Persistence,
	"controller":         Controllers,
	"controller-manager": Controllers,
	"scheduler":          Scheduling,
	"node":               Kubelet,
	"storage":            Volumes,
	"volume":             Volumes,
	"csi":                Volumes,
	"pvc":                Volumes,
	"mount":              Volumes,
	"runtime":            Sandbox,
	"cri":                Sandbox,
	"containerd":         Sandbox,
	"network":            Sandbox,
	"cni":                Sandbox,
	"pull":               Image,
	"create":             Container,
	"config":             Container,
	"crash":              App,
	"probe":              Readiness,
	"endpoints":          Service,
	"svc":                Service,
	"kube-proxy":         Service,
	"netpol":             NetworkPolicy,
	"policy":             NetworkPolicy,
	"coredns":            DNS,
	"serviceaccount":     APIAccess,
	"sa":                 APIAccess,
}

// legacy maps the stages of histories written before the kubelet's order to
// the stage most of their scenarios moved to; callers that know the scenario
// ask the catalogue first.
var legacy = map[string]Stage{
	"runtime": Image,
	"network": Sandbox,
	"storage": Volumes,
}

// Legacy returns the current stage for a stage name read from an older
// record: current names and aliases as ParseStage reads them, the retired
// "runtime" as the image pull most of its scenarios were about.
func Legacy(name string) (Stage, bool) {
	if st, ok := legacy[name]; ok {
		return st, true
	}
	st, err := ParseStage(name)
	return st, err == nil
}

// Stages returns every stage in journey order.
func Stages() []Stage {
	out := make([]Stage, len(catalog))
	for i, c := range catalog {
		out[i] = c.stage
	}
	return out
}

// ParseStage accepts a canonical stage name or a common alias, case-insensitively.
func ParseStage(s string) (Stage, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	if st := Stage(name); st.Index() >= 0 {
		return st, nil
	}
	if st, ok := aliases[name]; ok {
		return st, nil
	}
	names := make([]string, len(catalog))
	for i, c := range catalog {
		names[i] = string(c.stage)
	}
	return "", fmt.Errorf("unknown stage %q (valid: %s)", s, strings.Join(names, ", "))
}

// Index is the stage's position in the journey, or -1 for an unknown stage.
func (s Stage) Index() int {
	for i, c := range catalog {
		if c.stage == s {
			return i
		}
	}
	return -1
}

// Title is the stage's name as drawn on the whiteboard.
func (s Stage) Title() string {
	if i := s.Index(); i >= 0 {
		return catalog[i].title
	}
	return string(s)
}

// Commands are what a learner would run to investigate this stage.
func (s Stage) Commands() []string {
	if i := s.Index(); i >= 0 {
		return append([]string(nil), catalog[i].commands...)
	}
	return nil
}
