package evidence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/utils/ptr"

	"github.com/cka-lab/lab/internal/journey"
)

// What explain reads beyond the Pod's way to Ready. Everything here only reads: the lookup runs getent or
// nslookup inside the Pod, the dial is a GET through the API server's Pod proxy, the access review is not
// stored. Evidence that cannot be read (a shared cluster's learner may not list nodes or kube-system) is
// left out rather than failing the explanation.

const (
	lookupName    = "kubernetes.default.svc.cluster.local."
	lookupTimeout = 6 * time.Second
	dialTimeout   = 3 * time.Second
	logTimeout    = 5 * time.Second
	logTail       = 200
)

// lookupScript resolves the API server's Service name with what the image has; 127 says it has neither tool.
var lookupScript = `if command -v getent >/dev/null 2>&1; then getent hosts ` + lookupName +
	`; elif command -v nslookup >/dev/null 2>&1; then nslookup ` + lookupName + `; else exit 127; fi`

// frontService finds the Service in front of the Pod: the one named (a scenario's), else the one that selects
// it (preferring the one named after its app), else one named after its app that selects something else (a
// selector that lost the Pod). nil when there is none.
func frontService(ctx context.Context, kc kubernetes.Interface, pod *corev1.Pod, named, app string) (*corev1.Service, error) {
	ns := pod.Namespace
	if named != "" {
		svc, err := kc.CoreV1().Services(ns).Get(ctx, named, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("read Service %s/%s: %w", ns, named, err)
		}
		return svc, nil
	}
	sl, err := kc.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Services in %s: %w", ns, err)
	}
	items := sl.Items
	slices.SortFunc(items, func(a, b corev1.Service) int { return strings.Compare(a.Name, b.Name) })
	var selecting []corev1.Service
	for _, s := range items {
		if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(pod.Labels)) {
			selecting = append(selecting, s)
		}
	}
	for _, s := range selecting {
		if s.Name == app {
			return &s, nil
		}
	}
	if len(selecting) > 0 {
		return &selecting[0], nil
	}
	for _, s := range items {
		if s.Name == app && len(s.Spec.Selector) > 0 {
			return &s, nil
		}
	}
	return nil, nil
}

// serviceInfo counts a Service's ready endpoints and, for a Ready Pod that no ingress policy isolates, dials
// the Pod on each target port: a refused connection tells a wrong targetPort from an app that answers.
func serviceInfo(ctx context.Context, kc kubernetes.Interface, svc *corev1.Service, pod *corev1.Pod, isolated bool) (*journey.ServiceInfo, error) {
	info := &journey.ServiceInfo{Name: svc.Name, Selector: svc.Spec.Selector, Ports: svc.Spec.Ports}
	if info.Selector == nil {
		info.Selector = map[string]string{}
	}
	ready, err := readyEndpoints(ctx, kc, svc.Namespace, svc.Name)
	if err != nil {
		return nil, err
	}
	info.ReadyEndpoints = ready
	if !Ready(pod) || isolated || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
		return info, nil
	}
	for _, p := range svc.Spec.Ports {
		port, ok := numericTarget(p, pod)
		if !ok || p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
			continue
		}
		info.Dials = append(info.Dials, dial(ctx, kc, pod, port))
	}
	return info, nil
}

// readyEndpoints counts the ready endpoints of a Service's EndpointSlices (an unready Pod stays in them with
// ready=false).
func readyEndpoints(ctx context.Context, kc kubernetes.Interface, ns, svc string) (int, error) {
	sl, err := kc.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return 0, fmt.Errorf("list the endpoints of Service %s/%s: %w", ns, svc, err)
	}
	n := 0
	for _, s := range sl.Items {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				n++
			}
		}
	}
	return n, nil
}

// numericTarget resolves a target port to a number, as the EndpointSlice controller does.
func numericTarget(p corev1.ServicePort, pod *corev1.Pod) (int32, bool) {
	if p.TargetPort.Type == intstr.String && p.TargetPort.StrVal != "" {
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == p.TargetPort.StrVal {
					return cp.ContainerPort, true
				}
			}
		}
		return 0, false
	}
	if p.TargetPort.IntVal != 0 {
		return p.TargetPort.IntVal, true
	}
	return p.Port, true
}

// dial connects to the Pod's port through the API server's proxy. Any HTTP answer, an error status included,
// proves something listens; only the proxy's own failure to connect is kept.
func dial(ctx context.Context, kc kubernetes.Interface, pod *corev1.Pod, port int32) journey.Dial {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	body, err := kc.CoreV1().Pods(pod.Namespace).ProxyGet("http", pod.Name, strconv.Itoa(int(port)), "/", nil).DoRaw(ctx)
	d := journey.Dial{Port: port}
	if err == nil {
		return d
	}
	// The proxy's failure is in the body; the client's error only says 503.
	msg := oneLine(string(body))
	if !strings.Contains(msg, "error trying to reach") {
		msg = oneLine(err.Error())
	}
	if strings.Contains(msg, "error trying to reach") || ctx.Err() != nil {
		d.Err = msg
	}
	return d
}

// traffic reads what the Pod meets once Running: policies, kube-proxy, cluster DNS and refused API requests.
func traffic(ctx context.Context, cfg *rest.Config, kc kubernetes.Interface, pod *corev1.Pod) *journey.Traffic {
	t := &journey.Traffic{}
	if pl, err := kc.NetworkingV1().NetworkPolicies(pod.Namespace).List(ctx, metav1.ListOptions{}); err == nil {
		t.Policies = pl.Items
	}
	if len(t.Policies) > 0 {
		if nl, err := kc.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err == nil {
			t.Namespaces = nl.Items
		}
		if pl, err := kc.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err == nil {
			t.Peers = pl.Items
		}
	}
	t.Proxy = proxyDown(ctx, kc)
	t.DNS = clusterDNS(ctx, kc)
	if !pod.Spec.HostNetwork || pod.Spec.DNSPolicy == corev1.DNSClusterFirstWithHostNet {
		t.DNS.Lookup = lookup(ctx, cfg, kc, pod)
	}
	t.Denials = denials(ctx, kc, pod)
	return t
}

// proxyDown names the kube-proxy Pods that are not Ready.
func proxyDown(ctx context.Context, kc kubernetes.Interface) string {
	pl, err := kc.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-proxy"})
	if err != nil {
		return ""
	}
	var down []string
	for _, p := range pl.Items {
		if !Ready(&p) {
			down = append(down, fmt.Sprintf("kube-proxy Pod %s on %s: %s", p.Name, p.Spec.NodeName, podState(&p)))
		}
	}
	return strings.Join(down, "; ")
}

// clusterDNS reads the kube-dns Service, its ready endpoints and the CoreDNS Pods that are not Ready.
func clusterDNS(ctx context.Context, kc kubernetes.Interface) journey.DNSInfo {
	var d journey.DNSInfo
	svc, err := kc.CoreV1().Services(metav1.NamespaceSystem).Get(ctx, "kube-dns", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return d
	case err != nil:
		// Unreadable is not missing: only the lookup from the Pod can judge then.
		d.ReadyEndpoints = -1
		return d
	}
	d.ClusterIP = svc.Spec.ClusterIP
	if d.ReadyEndpoints, err = readyEndpoints(ctx, kc, svc.Namespace, svc.Name); err != nil {
		d.ReadyEndpoints = -1
	}
	pl, err := kc.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
	if err != nil {
		return d
	}
	ready, down, n := 0, []string{}, 0
	for _, p := range pl.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		n++
		if Ready(&p) {
			ready++
		} else {
			down = append(down, p.Name+": "+podState(&p))
		}
	}
	switch {
	case n == 0:
		d.Servers = "no CoreDNS Pod exists"
	case len(down) > 0:
		d.Servers = fmt.Sprintf("%d of %d CoreDNS Pods Ready (%s)", ready, n, strings.Join(down, ", "))
	}
	return d
}

// podState is the first reason a Pod is not Ready, as kubectl get pods shows it.
func podState(p *corev1.Pod) string {
	for _, st := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		switch {
		case st.State.Waiting != nil && st.State.Waiting.Reason != "":
			return st.State.Waiting.Reason
		case st.State.Terminated != nil && st.State.Terminated.Reason != "":
			return st.State.Terminated.Reason
		}
	}
	if p.Status.Reason != "" {
		return p.Status.Reason
	}
	return string(p.Status.Phase)
}

// lookup resolves the API server's Service name from inside the Pod; nil when the image has no shell or no
// resolver tool, or the exec itself cannot run.
func lookup(ctx context.Context, cfg *rest.Config, kc kubernetes.Interface, pod *corev1.Pod) *journey.Lookup {
	container := ""
	for _, st := range pod.Status.ContainerStatuses {
		if st.State.Running != nil {
			container = st.Name
			break
		}
	}
	if container == "" || cfg == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	out, err := execIn(ctx, cfg, kc, pod, container, []string{"sh", "-c", lookupScript})
	l := &journey.Lookup{Name: strings.TrimSuffix(lookupName, ".")}
	var exit utilexec.CodeExitError
	switch {
	case err == nil:
		l.OK = true
	case ctx.Err() != nil:
		l.Output = fmt.Sprintf("no answer within %s", lookupTimeout)
	case errors.As(err, &exit) && exit.Code != 127:
		l.Output = oneLine(out)
		if l.Output == "" {
			l.Output = fmt.Sprintf("the lookup failed (exit code %d)", exit.Code)
		}
	default:
		return nil
	}
	return l
}

func execIn(ctx context.Context, cfg *rest.Config, kc kubernetes.Interface, pod *corev1.Pod, container string, cmd []string) (string, error) {
	req := kc.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		return "", err
	}
	// Separate buffers: the executor writes stdout and stderr from goroutines of their own.
	var out, stderr bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &stderr})
	return out.String() + stderr.String(), err
}

// denials reads the running containers' recent logs for refused API requests and asks the API server whether
// each is still refused.
func denials(ctx context.Context, kc kubernetes.Interface, pod *corev1.Pod) []journey.Denial {
	var out []journey.Denial
	for _, st := range pod.Status.ContainerStatuses {
		if st.State.Running == nil {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, logTimeout)
		raw, err := kc.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
			Container: st.Name, TailLines: ptr.To(int64(logTail)), LimitBytes: ptr.To(int64(256 << 10)),
		}).DoRaw(lctx)
		cancel()
		if err != nil {
			continue
		}
		for _, d := range journey.Denials(st.Name, string(raw)) {
			d.Allowed = allowedNow(ctx, kc, d)
			out = append(out, d)
		}
	}
	return out
}

// allowedNow asks the API server with a SubjectAccessReview (never stored) whether the ServiceAccount may do
// it now; nil when the review cannot be made.
func allowedNow(ctx context.Context, kc kubernetes.Interface, d journey.Denial) *bool {
	ns, _, _ := strings.Cut(strings.TrimPrefix(d.User, "system:serviceaccount:"), ":")
	resource, sub, _ := strings.Cut(d.Resource, "/")
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   d.User,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: d.Namespace, Verb: d.Verb, Group: d.Group, Resource: resource, Subresource: sub,
		},
	}}
	res, err := kc.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return nil
	}
	return &res.Status.Allowed
}
