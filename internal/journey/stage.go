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
const (
	Authentication Stage = "authentication"
	Authorization  Stage = "authorization"
	Admission      Stage = "admission"
	Persistence    Stage = "persistence"
	Controllers    Stage = "controllers"
	Scheduling     Stage = "scheduling"
	Kubelet        Stage = "kubelet"
	Runtime        Stage = "runtime"
	Network        Stage = "network"
	Storage        Stage = "storage"
	Init           Stage = "init"
	App            Stage = "app"
	Readiness      Stage = "readiness"
	Service        Stage = "service"
)

type stageInfo struct {
	stage    Stage
	title    string
	commands []string
}

// catalog is the single source of order, titles and investigate commands.
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
		"kubectl describe rs <replicaset> -n <namespace>",
		"kubectl -n kube-system get pods -l component=kube-controller-manager",
	}},
	{Scheduling, "scheduling (filter, score, bind)", []string{
		"kubectl describe pod <pod> -n <namespace>",
		"kubectl describe nodes | grep -A3 -i taints",
		"kubectl -n kube-system get pods -l component=kube-scheduler",
	}},
	{Kubelet, "kubelet", []string{
		"kubectl get nodes",
		"kubectl describe node <node>",
		"systemctl status kubelet; journalctl -u kubelet -n 50   # on the node",
	}},
	{Runtime, "runtime (CRI, image pull)", []string{
		"kubectl describe pod <pod> -n <namespace>",
		"crictl ps -a; crictl images   # on the node",
		"systemctl status containerd   # on the node",
	}},
	{Network, "network (CNI)", []string{
		"kubectl -n kube-system get pods -o wide",
		"ls /etc/cni/net.d /opt/cni/bin   # on the node",
		"journalctl -u kubelet | grep -i cni   # on the node",
	}},
	{Storage, "storage (CSI, volumes)", []string{
		"kubectl get pvc,pv -n <namespace>",
		"kubectl describe pvc <claim> -n <namespace>",
		"kubectl get storageclass",
	}},
	{Init, "init containers", []string{
		"kubectl logs <pod> -c <init-container> -n <namespace>",
		"kubectl describe pod <pod> -n <namespace>",
	}},
	{App, "app container", []string{
		"kubectl logs <pod> --previous -n <namespace>",
		"kubectl describe pod <pod> -n <namespace>",
	}},
	{Readiness, "readiness", []string{
		"kubectl describe pod <pod> -n <namespace>",
		"kubectl get pod <pod> -n <namespace> -o jsonpath='{.spec.containers[*].readinessProbe}'",
	}},
	{Service, "service (endpoints, DNS)", []string{
		"kubectl describe service <service> -n <namespace>",
		"kubectl get endpointslices -n <namespace> -l kubernetes.io/service-name=<service>",
		"kubectl get networkpolicy -n <namespace>",
		"kubectl run dns-test --rm -it --image=busybox:1.36 --restart=Never -- nslookup <service>",
	}},
}

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
	"image":              Runtime,
	"cri":                Runtime,
	"containerd":         Runtime,
	"cni":                Network,
	"csi":                Storage,
	"volumes":            Storage,
	"volume":             Storage,
	"pvc":                Storage,
	"dns":                Service,
	"endpoints":          Service,
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
