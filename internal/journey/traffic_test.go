package journey

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// servingPod is healthyPod labelled app=web, serving port 80 as "http".
func servingPod(mods ...func(*corev1.Pod)) *corev1.Pod {
	return healthyPod(append([]func(*corev1.Pod){func(p *corev1.Pod) {
		p.Labels = map[string]string{"app": "web"}
		p.Spec.ServiceAccountName = "default"
		p.Spec.DNSPolicy = corev1.DNSClusterFirst
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}}
	}}, mods...)...)
}

func webService(target intstr.IntOrString, mods ...func(*ServiceInfo)) *ServiceInfo {
	s := &ServiceInfo{Name: "web", ReadyEndpoints: 1, Selector: map[string]string{"app": "web"},
		Ports: []corev1.ServicePort{{Port: 80, TargetPort: target, Protocol: corev1.ProtocolTCP}}}
	for _, m := range mods {
		m(s)
	}
	return s
}

func healthyDNS() DNSInfo {
	return DNSInfo{ClusterIP: "10.96.0.10", ReadyEndpoints: 2,
		Lookup: &Lookup{Name: "kubernetes.default.svc.cluster.local", OK: true}}
}

func policy(name string, spec networkingv1.NetworkPolicySpec) networkingv1.NetworkPolicy {
	return networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: spec}
}

func ingressOnly() []networkingv1.PolicyType {
	return []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
}

func tcp(port int) networkingv1.NetworkPolicyPort {
	p := intstr.FromInt32(int32(port))
	return networkingv1.NetworkPolicyPort{Protocol: ptrTo(corev1.ProtocolTCP), Port: &p}
}

func peerPod(ns, name string, lbls map[string]string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Labels: lbls}}
}

func TestTraceAfterReady(t *testing.T) {
	frontend := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "frontend"}}
	tests := []struct {
		name     string
		in       Evidence
		stage    Stage
		evidence string
	}{
		{
			name: "everything passes",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Service: webService(intstr.FromString("http")),
				Traffic: &Traffic{DNS: healthyDNS()}},
		},
		{
			name: "service selects other labels",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Traffic: &Traffic{DNS: healthyDNS()},
				Service: webService(intstr.FromInt32(80), func(s *ServiceInfo) { s.Selector = map[string]string{"app": "wbe"}; s.ReadyEndpoints = 0 })},
			stage:    Service,
			evidence: "Service web selects app=wbe; Pod web is labelled app=web",
		},
		{
			name:     "named target port the pod does not name",
			in:       Evidence{Node: readyNode(), Pod: servingPod(), Service: webService(intstr.FromString("web")), Traffic: &Traffic{DNS: healthyDNS()}},
			stage:    Service,
			evidence: "Service web port 80 -> targetPort web; Pod web names ports: http=80/TCP (web)",
		},
		{
			name: "target port refused",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Traffic: &Traffic{DNS: healthyDNS()},
				Service: webService(intstr.FromInt32(8080), func(s *ServiceInfo) {
					s.Dials = []Dial{{Port: 8080, Err: "dial tcp 10.244.1.7:8080: connect: connection refused"}}
				})},
			stage:    Service,
			evidence: "Service web sends port 80 to targetPort 8080; a connection to web:8080 is refused (the Pod declares http=80/TCP (web))",
		},
		{
			name:     "target port not declared, not dialled",
			in:       Evidence{Node: readyNode(), Pod: servingPod(), Service: webService(intstr.FromInt32(8080)), Traffic: &Traffic{DNS: healthyDNS()}},
			stage:    Service,
			evidence: "Service web sends port 80 to targetPort 8080; Pod web declares http=80/TCP (web)",
		},
		{
			name: "undeclared target port that answers passes",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Traffic: &Traffic{DNS: healthyDNS()},
				Service: webService(intstr.FromInt32(9090), func(s *ServiceInfo) { s.Dials = []Dial{{Port: 9090}} })},
		},
		{
			name: "kube-proxy down",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Service: webService(intstr.FromInt32(80)),
				Traffic: &Traffic{DNS: healthyDNS(), Proxy: "kube-proxy Pod kube-proxy-x7k2p on worker: CrashLoopBackOff"}},
			stage:    Service,
			evidence: "kube-proxy Pod kube-proxy-x7k2p on worker: CrashLoopBackOff",
		},
		{
			name: "deny-all ingress",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Service: webService(intstr.FromInt32(80)), Traffic: &Traffic{DNS: healthyDNS(),
				Policies: []networkingv1.NetworkPolicy{policy("deny-all", networkingv1.NetworkPolicySpec{PolicyTypes: ingressOnly()})}}},
			stage:    NetworkPolicy,
			evidence: "networkpolicy/deny-all selects Pod web (policyTypes Ingress) with no ingress rule",
		},
		{
			name: "policy of another namespace does not apply",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Traffic: &Traffic{DNS: healthyDNS(),
				Policies: []networkingv1.NetworkPolicy{func() networkingv1.NetworkPolicy {
					p := policy("deny-all", networkingv1.NetworkPolicySpec{PolicyTypes: ingressOnly()})
					p.Namespace = "other"
					return p
				}()}}},
		},
		{
			name: "allowed port is not the service's",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Service: webService(intstr.FromString("http")), Traffic: &Traffic{DNS: healthyDNS(),
				Policies: []networkingv1.NetworkPolicy{policy("allow-web", networkingv1.NetworkPolicySpec{
					PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, PolicyTypes: ingressOnly(),
					Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{tcp(8080)}}},
				})}}},
			stage:    NetworkPolicy,
			evidence: "networkpolicy/allow-web selects Pod web and allows only 8080/TCP",
		},
		{
			name: "allowed peers match no pod",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Service: webService(intstr.FromInt32(80)), Traffic: &Traffic{DNS: healthyDNS(),
				Policies: []networkingv1.NetworkPolicy{policy("allow-frontend", networkingv1.NetworkPolicySpec{
					PolicyTypes: ingressOnly(),
					Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: frontend}},
						Ports: []networkingv1.NetworkPolicyPort{tcp(80)}}},
				})},
				Peers: []corev1.Pod{peerPod("default", "fe", map[string]string{"role": "frontend"}), peerPod("shop", "fe2", map[string]string{"app": "frontend"})}}},
			stage:    NetworkPolicy,
			evidence: "networkpolicy/allow-frontend allows ingress to port 80/TCP only from Pods app=frontend in namespace default; no Pod matches",
		},
		{
			name: "peers that could not be read are not judged",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Service: webService(intstr.FromInt32(80)), Traffic: &Traffic{DNS: healthyDNS(),
				Policies: []networkingv1.NetworkPolicy{policy("allow-frontend", networkingv1.NetworkPolicySpec{
					PolicyTypes: ingressOnly(),
					Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: frontend}}}},
				})}}},
		},
		{
			name: "allowed peers match a pod",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Service: webService(intstr.FromInt32(80)), Traffic: &Traffic{DNS: healthyDNS(),
				Policies: []networkingv1.NetworkPolicy{policy("allow-frontend", networkingv1.NetworkPolicySpec{
					PolicyTypes: ingressOnly(),
					Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{
						PodSelector: frontend, NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "shop"}}}}}},
				})},
				Namespaces: []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"team": "shop"}}}},
				Peers:      []corev1.Pod{peerPod("shop", "fe", map[string]string{"app": "frontend"})}}},
		},
		{
			name: "egress isolated without dns",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Traffic: &Traffic{DNS: healthyDNS(),
				Policies: []networkingv1.NetworkPolicy{policy("egress-db", networkingv1.NetworkPolicySpec{
					PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
					Egress:      []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{tcp(5432)}}},
				})}}},
			stage:    NetworkPolicy,
			evidence: "networkpolicy/egress-db selects Pod web (policyTypes Egress) and allows no egress to port 53",
		},
		{
			name: "egress that lets dns out passes",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Traffic: &Traffic{DNS: healthyDNS(),
				Policies: []networkingv1.NetworkPolicy{policy("egress-dns", networkingv1.NetworkPolicySpec{
					PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
					Egress: []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{
						{Protocol: ptrTo(corev1.ProtocolUDP), Port: ptrTo(intstr.FromInt32(53))}}}},
				})}}},
		},
		{
			name: "dnsPolicy None with a nameserver that is not the cluster's",
			in: Evidence{Node: readyNode(), Pod: servingPod(func(p *corev1.Pod) {
				p.Spec.DNSPolicy = corev1.DNSNone
				p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"10.96.0.53"}}
			}), Traffic: &Traffic{DNS: DNSInfo{ClusterIP: "10.96.0.10", ReadyEndpoints: 2,
				Lookup: &Lookup{Name: "kubernetes.default.svc.cluster.local", Output: ";; connection timed out; no servers could be reached"}}}},
			stage:    DNS,
			evidence: "spec.dnsPolicy None, spec.dnsConfig.nameservers [10.96.0.53]; lookup of kubernetes.default.svc.cluster.local from the Pod: ;; connection timed out; no servers could be reached",
		},
		{
			name: "coredns down",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Traffic: &Traffic{DNS: DNSInfo{ClusterIP: "10.96.0.10",
				Servers: "0 of 2 CoreDNS Pods Ready (coredns-7d9-abc: CrashLoopBackOff)"}}},
			stage:    DNS,
			evidence: "Service kube-system/kube-dns has 0 ready endpoints; 0 of 2 CoreDNS Pods Ready (coredns-7d9-abc: CrashLoopBackOff)",
		},
		{
			name: "lookup fails although coredns is up",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Traffic: &Traffic{DNS: DNSInfo{ClusterIP: "10.96.0.10", ReadyEndpoints: 2,
				Lookup: &Lookup{Name: "kubernetes.default.svc.cluster.local", Output: "no answer within 6s"}}}},
			stage:    DNS,
			evidence: "lookup of kubernetes.default.svc.cluster.local from the Pod: no answer within 6s",
		},
		{
			name: "hostNetwork pod uses the node's resolver",
			in: Evidence{Node: readyNode(), Pod: servingPod(func(p *corev1.Pod) { p.Spec.HostNetwork = true }),
				Traffic: &Traffic{DNS: DNSInfo{}}},
		},
		{
			name: "service account forbidden",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Traffic: &Traffic{DNS: healthyDNS(),
				Denials: Denials("web", `E1204 pods is forbidden: User "system:serviceaccount:default:default" cannot list resource "pods" in API group "" in the namespace "default"`)}},
			stage:    APIAccess,
			evidence: `container web logged: pods is forbidden: User "system:serviceaccount:default:default" cannot list resource "pods" in API group "" in the namespace "default"`,
		},
		{
			name: "forbidden in the past, allowed now",
			in: Evidence{Node: readyNode(), Pod: servingPod(), Traffic: &Traffic{DNS: healthyDNS(), Denials: []Denial{{
				Container: "web", User: "system:serviceaccount:default:default", Verb: "list", Resource: "pods", Allowed: ptrTo(true)}}}},
		},
		{
			name: "completed pod meets no traffic",
			in: Evidence{Node: readyNode(), Pod: servingPod(func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodSucceeded
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}
			}), Service: &ServiceInfo{Name: "web"}, Traffic: &Traffic{}},
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
			for _, h := range r.Handoffs {
				if h.Stage.Index() > Readiness.Index() && h.Stage.Index() < APIAccess.Index() && r.Stopped == "" && h.Status == Failed {
					t.Errorf("%s failed on a passing journey", h.Stage)
				}
			}
		})
	}
}

func TestDenials(t *testing.T) {
	log := `starting
{"kind":"Status","apiVersion":"v1","status":"Failure","message":"secrets is forbidden: User \"system:serviceaccount:shop:reporter\" cannot list resource \"secrets\" in API group \"\" in the namespace \"shop\"","reason":"Forbidden","code":403}
deployments.apps is forbidden: User "system:serviceaccount:shop:reporter" cannot get resource "deployments" in API group "apps" in the namespace "shop"
{"kind":"Status","message":"secrets is forbidden: User \"system:serviceaccount:shop:reporter\" cannot list resource \"secrets\" in API group \"\" in the namespace \"shop\""}
nodes is forbidden: User "system:serviceaccount:shop:reporter" cannot list resource "nodes" in API group "" at the cluster scope
GET /healthz 403 Forbidden`
	got := Denials("app", log)
	want := []Denial{
		{User: "system:serviceaccount:shop:reporter", Verb: "list", Resource: "nodes"},
		{User: "system:serviceaccount:shop:reporter", Verb: "list", Resource: "secrets", Namespace: "shop"},
		{User: "system:serviceaccount:shop:reporter", Verb: "get", Resource: "deployments", Group: "apps", Namespace: "shop"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d denials, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.User != w.User || g.Verb != w.Verb || g.Resource != w.Resource || g.Group != w.Group || g.Namespace != w.Namespace || g.Container != "app" || g.Line == "" {
			t.Errorf("denial %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestStuckRolloutNote(t *testing.T) {
	r := Trace(Evidence{Node: readyNode(), Pod: healthyPod(notReady), Workload: &Workload{Kind: "deployment", Name: "web",
		Stuck: `Progressing=False (ProgressDeadlineExceeded): ReplicaSet "web-5f7" has timed out progressing.`, OldReady: 2}})
	if r.Stopped != Readiness {
		t.Fatalf("Stopped = %q, want readiness: the new Pod is what fails", r.Stopped)
	}
	if len(r.Notes) == 0 || r.Notes[0] != `rollout of deployment/web is stuck: Progressing=False (ProgressDeadlineExceeded): ReplicaSet "web-5f7" has timed out progressing.; 2 Pod(s) of the previous revision still serve` {
		t.Errorf("Notes = %q", r.Notes)
	}
}
