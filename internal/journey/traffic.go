package journey

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The checks of this file follow a Pod that is Running and Ready: the Service
// that sends it traffic, the NetworkPolicies that let traffic in and out, the
// names it resolves and the API requests its ServiceAccount makes. A Pod can
// pass every stage before and still be broken for its users here.

// ServiceInfo describes the Service in front of the Pod.
type ServiceInfo struct {
	Name           string
	ReadyEndpoints int
	// Selector and Ports are the Service's; nil when the caller counted
	// endpoints only.
	Selector map[string]string
	Ports    []corev1.ServicePort
	// Dials are what connections to the Pod on the Service's target ports got.
	Dials []Dial
}

// Dial is one connection to the Pod on a port, made through the API server.
type Dial struct {
	Port int32
	// Err is "" when the connection was answered.
	Err string
}

// Traffic is what the cluster holds about the Pod's traffic.
type Traffic struct {
	// Policies are the NetworkPolicies of the Pod's namespace.
	Policies []networkingv1.NetworkPolicy
	// Namespaces and Peers are every namespace and Pod, to tell whether a
	// policy's peers match anything; nil when not read (no policy in the
	// namespace, or not allowed).
	Namespaces []corev1.Namespace
	Peers      []corev1.Pod
	// Proxy names the kube-proxy Pods that are not Ready; "" when all are or
	// none runs.
	Proxy string
	DNS   DNSInfo
	// Denials are the API requests the containers' recent logs show refused.
	Denials []Denial
}

// DNSInfo is the cluster DNS as the Pod sees it.
type DNSInfo struct {
	// ClusterIP is the kube-dns Service's; "" when there is no such Service.
	ClusterIP string
	// ReadyEndpoints counts the kube-dns Service's; -1 when the Service could
	// not be read, which leaves the judgement to the lookup.
	ReadyEndpoints int
	// Servers says which CoreDNS Pods are not Ready and why, "" when all are.
	Servers string
	// Lookup is a lookup of a cluster name from inside the Pod; nil when none
	// could run (no shell or no resolver tool in the image).
	Lookup *Lookup
}

// Lookup is one name lookup run in the Pod.
type Lookup struct {
	Name   string
	OK     bool
	Output string
}

// Denial is an API request a container's log shows refused with 403.
type Denial struct {
	Container string
	// Line is the API server's message, e.g. `secrets is forbidden: User ...`.
	Line string
	// User is the ServiceAccount's user name, system:serviceaccount:NS:NAME.
	User      string
	Verb      string
	Resource  string
	Group     string
	Namespace string
	// Allowed is the answer of an access review made now; nil when none was
	// made. A request that is allowed now was fixed after the log line.
	Allowed *bool
}

// forbiddenRE is the API server's 403 message as client-go and a raw HTTP
// body (quotes escaped in JSON) both carry it.
var forbiddenRE = regexp.MustCompile(`(?:[a-z0-9./-]+ is forbidden: )?User \\?"(system:serviceaccount:[^"\\]+)\\?" cannot ([a-z]+) resource \\?"([^"\\]+)\\?"(?: in API group \\?"([^"\\]*)\\?")?(?: in the namespace \\?"([^"\\]+)\\?"| at the cluster scope)?`)

// Denials finds the refused API requests of a ServiceAccount in a container's
// log, the newest first and each request once.
func Denials(container, log string) []Denial {
	var out []Denial
	seen := map[string]bool{}
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		m := forbiddenRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		key := strings.Join(m[1:], "|")
		if seen[key] {
			continue
		}
		seen[key] = true
		// The API server's message itself, unescaped from a JSON body.
		line := strings.ReplaceAll(m[0], `\"`, `"`)
		out = append(out, Denial{Container: container, Line: line, User: m[1], Verb: m[2], Resource: m[3], Group: m[4], Namespace: m[5]})
	}
	return out
}

// passedTraffic describes a stage after readiness that the journey got through.
func passedTraffic(s Stage, in Evidence) (Status, string) {
	pod := in.Pod
	if pod.Status.Phase == corev1.PodSucceeded {
		return Skipped, "the Pod has completed"
	}
	if s == Service {
		if in.Service == nil {
			return Skipped, "no Service selects the Pod"
		}
		return Passed, fmt.Sprintf("Service %s has %d ready endpoint(s)", in.Service.Name, in.Service.ReadyEndpoints)
	}
	t := in.Traffic
	if t == nil {
		return Skipped, "not checked"
	}
	switch s {
	case NetworkPolicy:
		var names []string
		for _, p := range t.Policies {
			if selects(&p, pod, "") {
				names = append(names, p.Name)
			}
		}
		if len(names) == 0 {
			return Passed, "no NetworkPolicy selects the Pod"
		}
		return Passed, "allowed by " + strings.Join(names, ", ")
	case DNS:
		if l := t.DNS.Lookup; l != nil && l.OK {
			return Passed, l.Name + " resolves from the Pod"
		}
		if pod.Spec.HostNetwork && pod.Spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
			return Passed, "hostNetwork: the node's resolver"
		}
	case APIAccess:
		return Passed, "no refused API request in the containers' recent logs"
	}
	return Passed, ""
}

func running(pod *corev1.Pod) bool { return pod.Status.Phase == corev1.PodRunning }

func checkService(in Evidence) (finding, bool) {
	svc, pod := in.Service, in.Pod
	if svc == nil || !running(pod) {
		return finding{}, false
	}
	vars := map[string]string{"service": svc.Name}
	if len(svc.Selector) > 0 && !labels.SelectorFromSet(svc.Selector).Matches(labels.Set(pod.Labels)) {
		return finding{stage: Service, detail: fmt.Sprintf("Service %s does not select the Pod", svc.Name),
			evidence: fmt.Sprintf("Service %s selects %s; Pod %s is labelled %s", svc.Name, labels.Set(svc.Selector), pod.Name, labels.Set(pod.Labels)), vars: vars}, true
	}
	for _, p := range svc.Ports {
		if f, ok := portFinding(svc, p, pod); ok {
			f.vars = vars
			return f, true
		}
	}
	if svc.ReadyEndpoints == 0 {
		return finding{stage: Service, detail: fmt.Sprintf("Service %s selects no ready Pod (check its selector and ports)", svc.Name),
			evidence: fmt.Sprintf("Service %s has 0 ready endpoints", svc.Name), vars: vars}, true
	}
	if t := in.Traffic; t != nil && t.Proxy != "" {
		return finding{stage: Service, detail: "kube-proxy is not running on every node: Service IPs do not reach the endpoints from there",
			evidence: t.Proxy, vars: vars}, true
	}
	return finding{}, false
}

// portFinding judges one Service port against the Pod: a named target port
// the Pod does not name, or a number nothing answers on (a refused
// connection), or, when no connection was tried, none of the ports the Pod's
// containers declare or probe.
func portFinding(svc *ServiceInfo, p corev1.ServicePort, pod *corev1.Pod) (finding, bool) {
	target, ok := targetPort(p, pod)
	if !ok {
		return finding{stage: Service, detail: fmt.Sprintf("Service %s targets port %q, which no container of the Pod names", svc.Name, p.TargetPort.String()),
			evidence: fmt.Sprintf("Service %s port %d -> targetPort %s; Pod %s names ports: %s", svc.Name, p.Port, p.TargetPort.String(), pod.Name, declared(pod))}, true
	}
	sends := fmt.Sprintf("Service %s sends port %d to targetPort %d", svc.Name, p.Port, target)
	for _, d := range svc.Dials {
		if d.Port != target {
			continue
		}
		if d.Err == "" {
			return finding{}, false
		}
		if strings.Contains(d.Err, "connection refused") {
			return finding{stage: Service, detail: fmt.Sprintf("nothing listens on port %d of Pod %s: the Service sends to the wrong port", target, pod.Name),
				evidence: fmt.Sprintf("%s; a connection to %s:%d is refused (the Pod declares %s)", sends, pod.Name, target, declared(pod))}, true
		}
	}
	known := knownPorts(pod)
	if len(known) > 0 && !slices.Contains(known, target) {
		return finding{stage: Service, detail: fmt.Sprintf("Service %s sends to a port the Pod does not serve", svc.Name),
			evidence: fmt.Sprintf("%s; Pod %s declares %s", sends, pod.Name, declared(pod))}, true
	}
	return finding{}, false
}

// targetPort resolves a Service port's target against the Pod, as the
// EndpointSlice controller does (podutil.FindPort).
func targetPort(p corev1.ServicePort, pod *corev1.Pod) (int32, bool) {
	switch {
	case p.TargetPort.Type == intstr.String && p.TargetPort.StrVal != "":
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == p.TargetPort.StrVal && protocolOf(cp.Protocol) == protocolOf(p.Protocol) {
					return cp.ContainerPort, true
				}
			}
		}
		return 0, false
	case p.TargetPort.IntVal != 0:
		return p.TargetPort.IntVal, true
	}
	return p.Port, true
}

func protocolOf(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

// knownPorts are the ports the Pod says it serves: declared container ports
// and the ports its probes reach.
func knownPorts(pod *corev1.Pod) []int32 {
	var out []int32
	for _, c := range pod.Spec.Containers {
		for _, cp := range c.Ports {
			out = append(out, cp.ContainerPort)
		}
		for _, pr := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
			if pr == nil {
				continue
			}
			var port intstr.IntOrString
			switch {
			case pr.HTTPGet != nil:
				port = pr.HTTPGet.Port
			case pr.TCPSocket != nil:
				port = pr.TCPSocket.Port
			default:
				continue
			}
			if port.Type == intstr.Int {
				out = append(out, port.IntVal)
			}
		}
	}
	return out
}

func declared(pod *corev1.Pod) string {
	var parts []string
	for _, c := range pod.Spec.Containers {
		for _, cp := range c.Ports {
			s := fmt.Sprintf("%d/%s", cp.ContainerPort, protocolOf(cp.Protocol))
			if cp.Name != "" {
				s = cp.Name + "=" + s
			}
			parts = append(parts, s+" ("+c.Name+")")
		}
	}
	if len(parts) == 0 {
		return "no ports"
	}
	return strings.Join(parts, ", ")
}

func checkNetworkPolicy(in Evidence) (finding, bool) {
	if in.Traffic == nil || !running(in.Pod) {
		return finding{}, false
	}
	if f, ok := ingressBlocked(in); ok {
		return f, true
	}
	return egressDNSBlocked(in)
}

type policyRule struct {
	policy string
	ports  []networkingv1.NetworkPolicyPort
	peers  []networkingv1.NetworkPolicyPeer
}

// selects reports whether the policy applies to the Pod for the policy type
// ("" for either). policyTypes is defaulted by the API server, but a policy
// without it still isolates ingress, and egress when it has egress rules.
func selects(p *networkingv1.NetworkPolicy, pod *corev1.Pod, typ networkingv1.PolicyType) bool {
	if p.Namespace != pod.Namespace {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
	if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
		return false
	}
	types := p.Spec.PolicyTypes
	if len(types) == 0 {
		types = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(p.Spec.Egress) > 0 {
			types = append(types, networkingv1.PolicyTypeEgress)
		}
	}
	return typ == "" || slices.Contains(types, typ)
}

func ingressBlocked(in Evidence) (finding, bool) {
	t, pod := in.Traffic, in.Pod
	var names []string
	var rules []policyRule
	for i := range t.Policies {
		p := &t.Policies[i]
		if !selects(p, pod, networkingv1.PolicyTypeIngress) {
			continue
		}
		names = append(names, p.Name)
		for _, r := range p.Spec.Ingress {
			rules = append(rules, policyRule{p.Name, r.Ports, r.From})
		}
	}
	if len(names) == 0 {
		return finding{}, false
	}
	list := "networkpolicy/" + strings.Join(names, ", networkpolicy/")
	if len(rules) == 0 {
		return finding{stage: NetworkPolicy, detail: "every connection to the Pod is dropped: a policy selects it for ingress and allows nothing",
			evidence: list + " selects Pod " + pod.Name + " (policyTypes Ingress) with no ingress rule"}, true
	}
	ports := serviceTargets(in)
	if len(ports) == 0 {
		ports = []corev1.ContainerPort{{}} // any port: only the peers are judged
	}
	for _, port := range ports {
		var allowing []policyRule
		for _, r := range rules {
			if allowsPort(r.ports, port, pod) {
				allowing = append(allowing, r)
			}
		}
		what := "ingress"
		if port.ContainerPort != 0 {
			what = fmt.Sprintf("ingress to port %d/%s", port.ContainerPort, protocolOf(port.Protocol))
		}
		if len(allowing) == 0 {
			return finding{stage: NetworkPolicy, detail: fmt.Sprintf("no NetworkPolicy that selects the Pod allows %s", what),
				evidence: fmt.Sprintf("%s selects Pod %s and allows only %s", list, pod.Name, describePorts(rules))}, true
		}
		if !slices.ContainsFunc(allowing, func(r policyRule) bool { return peersMatch(r.peers, in) }) {
			return finding{stage: NetworkPolicy, detail: fmt.Sprintf("%s is allowed only from peers that match no Pod", what),
				evidence: fmt.Sprintf("%s allows %s only from %s; no Pod matches", list, what, describePeers(allowing, pod.Namespace))}, true
		}
	}
	return finding{}, false
}

// egressDNSBlocked reports a policy that isolates the Pod's egress without
// letting its name lookups (port 53) out.
func egressDNSBlocked(in Evidence) (finding, bool) {
	t, pod := in.Traffic, in.Pod
	var names []string
	allowed := false
	dns := []corev1.ContainerPort{{ContainerPort: 53, Protocol: corev1.ProtocolUDP}, {ContainerPort: 53, Protocol: corev1.ProtocolTCP}}
	for i := range t.Policies {
		p := &t.Policies[i]
		if !selects(p, pod, networkingv1.PolicyTypeEgress) {
			continue
		}
		names = append(names, p.Name)
		for _, r := range p.Spec.Egress {
			if slices.ContainsFunc(dns, func(port corev1.ContainerPort) bool { return allowsPort(r.Ports, port, nil) }) &&
				(len(r.To) == 0 || peersMatch(r.To, in)) {
				allowed = true
			}
		}
	}
	if len(names) == 0 || allowed {
		return finding{}, false
	}
	return finding{stage: NetworkPolicy, detail: "the Pod's name lookups are dropped: a policy isolates its egress and allows no DNS (port 53)",
		evidence: fmt.Sprintf("networkpolicy/%s selects Pod %s (policyTypes Egress) and allows no egress to port 53", strings.Join(names, ", networkpolicy/"), pod.Name)}, true
}

// serviceTargets are the container ports the Service in front sends to.
func serviceTargets(in Evidence) []corev1.ContainerPort {
	if in.Service == nil {
		return nil
	}
	var out []corev1.ContainerPort
	for _, p := range in.Service.Ports {
		if n, ok := targetPort(p, in.Pod); ok {
			out = append(out, corev1.ContainerPort{ContainerPort: n, Protocol: protocolOf(p.Protocol)})
		}
	}
	return out
}

// allowsPort reports whether a rule's ports admit the port (ContainerPort 0:
// any port). A named policy port matches the Pod's port of that name.
func allowsPort(ports []networkingv1.NetworkPolicyPort, want corev1.ContainerPort, pod *corev1.Pod) bool {
	if len(ports) == 0 || want.ContainerPort == 0 {
		return true
	}
	for _, p := range ports {
		proto := corev1.ProtocolTCP
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		if proto != protocolOf(want.Protocol) {
			continue
		}
		switch {
		case p.Port == nil:
			return true
		case p.Port.Type == intstr.String:
			if pod != nil && namedPort(pod, p.Port.StrVal) == want.ContainerPort {
				return true
			}
		case p.EndPort != nil:
			if want.ContainerPort >= p.Port.IntVal && want.ContainerPort <= *p.EndPort {
				return true
			}
		case p.Port.IntVal == want.ContainerPort:
			return true
		}
	}
	return false
}

func namedPort(pod *corev1.Pod, name string) int32 {
	for _, c := range pod.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == name {
				return cp.ContainerPort
			}
		}
	}
	return -1
}

// peersMatch reports whether any peer matches an existing Pod. What lab
// cannot tell counts as a match: an ipBlock (who sits behind an address), and
// peers it could not read (a shared cluster's learner may not list them).
func peersMatch(peers []networkingv1.NetworkPolicyPeer, in Evidence) bool {
	if len(peers) == 0 || in.Traffic.Peers == nil {
		return true
	}
	nsLabels := map[string]map[string]string{}
	for _, ns := range in.Traffic.Namespaces {
		nsLabels[ns.Name] = ns.Labels
	}
	for _, peer := range peers {
		if peer.IPBlock != nil {
			return true
		}
		podSel, nsSel := labels.Everything(), labels.Nothing()
		if peer.PodSelector != nil {
			s, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
			if err != nil {
				continue
			}
			podSel = s
		}
		if peer.NamespaceSelector != nil {
			if in.Traffic.Namespaces == nil {
				return true
			}
			s, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
			if err != nil {
				continue
			}
			nsSel = s
		}
		for _, p := range in.Traffic.Peers {
			inNS := p.Namespace == in.Pod.Namespace
			if peer.NamespaceSelector != nil {
				inNS = nsSel.Matches(labels.Set(nsLabels[p.Namespace]))
			}
			if inNS && podSel.Matches(labels.Set(p.Labels)) && p.UID != in.Pod.UID {
				return true
			}
		}
	}
	return false
}

func describePorts(rules []policyRule) string {
	var parts []string
	for _, r := range rules {
		if len(r.ports) == 0 {
			parts = append(parts, "all ports")
		}
		for _, p := range r.ports {
			proto := corev1.ProtocolTCP
			if p.Protocol != nil {
				proto = *p.Protocol
			}
			port := "all"
			if p.Port != nil {
				port = p.Port.String()
			}
			if p.EndPort != nil {
				port += fmt.Sprintf("-%d", *p.EndPort)
			}
			parts = append(parts, port+"/"+string(proto))
		}
	}
	return strings.Join(slices.Compact(parts), ", ")
}

func describePeers(rules []policyRule, ns string) string {
	var parts []string
	for _, r := range rules {
		for _, p := range r.peers {
			parts = append(parts, describePeer(p, ns))
		}
	}
	return strings.Join(parts, " or ")
}

func describePeer(p networkingv1.NetworkPolicyPeer, ns string) string {
	if p.IPBlock != nil {
		return "ipBlock " + p.IPBlock.CIDR
	}
	pods := "all Pods"
	if p.PodSelector != nil {
		pods = "Pods " + metav1.FormatLabelSelector(p.PodSelector)
	}
	if p.NamespaceSelector == nil {
		return pods + " in namespace " + ns
	}
	return pods + " in namespaces " + metav1.FormatLabelSelector(p.NamespaceSelector)
}

func checkDNS(in Evidence) (finding, bool) {
	t, pod := in.Traffic, in.Pod
	if t == nil || !running(pod) {
		return finding{}, false
	}
	if pod.Spec.HostNetwork && pod.Spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		return finding{}, false
	}
	d := t.DNS
	failed := d.Lookup != nil && !d.Lookup.OK
	lookup := ""
	if failed {
		lookup = fmt.Sprintf("; lookup of %s from the Pod: %s", d.Lookup.Name, d.Lookup.Output)
	}
	switch pod.Spec.DNSPolicy {
	case corev1.DNSNone:
		var servers []string
		if pod.Spec.DNSConfig != nil {
			servers = pod.Spec.DNSConfig.Nameservers
		}
		if d.ReadyEndpoints >= 0 && d.ClusterIP != "" && !slices.Contains(servers, d.ClusterIP) && (d.Lookup == nil || failed) {
			return finding{stage: DNS, detail: fmt.Sprintf("dnsPolicy None sends the Pod's lookups to %s, not the cluster DNS %s", strings.Join(servers, ", "), d.ClusterIP),
				evidence: fmt.Sprintf("spec.dnsPolicy None, spec.dnsConfig.nameservers [%s]%s", strings.Join(servers, " "), lookup)}, true
		}
	case corev1.DNSDefault:
		if failed {
			return finding{stage: DNS, detail: "dnsPolicy Default gives the Pod the node's resolver, which knows no cluster names",
				evidence: "spec.dnsPolicy Default" + lookup}, true
		}
		return finding{}, false
	default:
		switch {
		case d.ReadyEndpoints < 0:
		case d.ClusterIP == "":
			return finding{stage: DNS, detail: "the cluster has no DNS Service", evidence: "no Service kube-dns in namespace kube-system"}, true
		case d.ReadyEndpoints == 0:
			ev := "Service kube-system/kube-dns has 0 ready endpoints"
			if d.Servers != "" {
				ev += "; " + d.Servers
			}
			return finding{stage: DNS, detail: "cluster DNS is down: nothing answers behind the kube-dns Service", evidence: ev + lookup}, true
		}
	}
	if failed {
		return finding{stage: DNS, detail: "name lookups from the Pod fail", evidence: strings.TrimPrefix(lookup, "; ")}, true
	}
	return finding{}, false
}

func checkAPIAccess(in Evidence) (finding, bool) {
	t := in.Traffic
	if t == nil || !running(in.Pod) {
		return finding{}, false
	}
	for _, d := range t.Denials {
		if d.Allowed != nil && *d.Allowed {
			continue
		}
		sa := strings.TrimPrefix(d.User, "system:serviceaccount:")
		what := d.Resource
		if d.Group != "" {
			what += "." + d.Group
		}
		where := ""
		if d.Namespace != "" {
			where = " in namespace " + d.Namespace
		}
		_, name, _ := strings.Cut(sa, ":")
		return finding{stage: APIAccess, detail: fmt.Sprintf("the app may not %s %s%s: RBAC grants its ServiceAccount %s no such right", d.Verb, what, where, sa),
			evidence: fmt.Sprintf("container %s logged: %s", d.Container, d.Line),
			vars:     map[string]string{"container": d.Container, "serviceaccount": name}}, true
	}
	return finding{}, false
}
