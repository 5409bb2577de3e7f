package grader

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/journey/evidence"
	"github.com/cka-lab/lab/scenarios"
)

func (e Env) endpoints(ctx context.Context, c *scenarios.EndpointsCheck) Result {
	svc, err := e.Clients.Kube.CoreV1().Services(c.Namespace).Get(ctx, c.Service, metav1.GetOptions{})
	if err != nil {
		return Result{Evidence: fmt.Sprintf("Service %s/%s: %v", c.Namespace, c.Service, err), Stage: journey.Service}
	}
	n, err := e.countEndpoints(ctx, c.Namespace, c.Service)
	if err != nil {
		return e.fail("list EndpointSlices of %s: %v", c.Service, err)
	}
	desc := fmt.Sprintf("Service %s/%s has %d ready and %d not-ready endpoints", c.Namespace, c.Service, n.ready, n.notReady)
	if n.foreign != "" {
		desc += "; not counted: " + n.foreign
	}
	if n.ready >= c.Ready && (!c.Exactly || n.ready == c.Ready) {
		return pass("%s", desc)
	}
	if c.Exactly && n.ready > c.Ready {
		return Result{Evidence: fmt.Sprintf("%s, want exactly %d ready: its selector %s matches more Pods", desc, c.Ready, selectorString(svc.Spec.Selector)), Stage: journey.Service}
	}
	if n.notReady > 0 {
		sel := selectorString(svc.Spec.Selector)
		return e.traced(ctx, scenarios.PodSelector{Namespace: c.Namespace, Selector: sel}, &journey.ServiceInfo{Name: c.Service, ReadyEndpoints: n.ready}, desc)
	}
	if n.foreign != "" {
		return Result{Evidence: desc, Stage: journey.Service}
	}
	return Result{Evidence: fmt.Sprintf("%s: no Pod matches its selector %s", desc, selectorString(svc.Spec.Selector)), Stage: journey.Service}
}

// endpointCount is a Service's endpoints: ready and not ready among the Pods a workload's current revision
// owns, and why the first other ready Pod (a bare Pod with the workload's labels) was not counted.
type endpointCount struct {
	ready, notReady int
	foreign         string
}

func (e Env) countEndpoints(ctx context.Context, ns, svc string) (endpointCount, error) {
	var n endpointCount
	sl, err := e.Clients.Kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return n, err
	}
	o := &owners{e: e, ns: ns}
	for _, s := range sl.Items {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				n.notReady++
				continue
			}
			if ref := ep.TargetRef; ref != nil && ref.Kind == "Pod" {
				pod, err := e.Clients.Kube.CoreV1().Pods(ns).Get(ctx, ref.Name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					continue // deleted since the slice was written: the endpoint goes with it
				}
				if err != nil {
					return n, fmt.Errorf("read Pod %s behind an endpoint: %w", ref.Name, err)
				}
				ok, why, err := o.current(ctx, pod)
				if err != nil {
					return n, err
				}
				if !ok {
					if n.foreign == "" {
						n.foreign = why
					}
					continue
				}
			}
			n.ready++
		}
	}
	return n, nil
}

// selectorString writes a Service's selector as `kubectl get -l` takes it, keys sorted: evidence built from
// map order read differently from one run to the next.
func selectorString(m map[string]string) string {
	return labels.SelectorFromSet(m).String()
}

// http asks the Service through the API server's proxy, which forwards to a ready endpoint: it proves the
// endpoints answer, not only that they exist.
func (e Env) http(ctx context.Context, c *scenarios.HTTPCheck) Result {
	port := c.Port
	if port == "" {
		port = "80"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	body, err := e.Clients.Kube.CoreV1().Services(c.Namespace).ProxyGet("http", c.Service, port, c.Path, nil).DoRaw(ctx)
	url := fmt.Sprintf("http://%s.%s:%s%s", c.Service, c.Namespace, port, c.Path)
	if err != nil {
		return Result{Evidence: fmt.Sprintf("GET %s: %v", url, firstLine(err.Error())), Stage: journey.Service}
	}
	if !strings.Contains(string(body), c.Contains) {
		return Result{Evidence: fmt.Sprintf("GET %s answers %q, want it to contain %q", url, snippet(body), c.Contains), Stage: journey.App}
	}
	return pass("GET %s answers with %q", url, c.Contains)
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// readyPod is the first Ready Pod the selector picks, of its controller's current revision when picked by
// label; without one, the failed Result says why, for what (to run a command, to read a log). A terminating
// Pod of the rollout a fix started may still be Ready, but it answers for the old spec, so it is skipped.
func (e Env) readyPod(ctx context.Context, sel scenarios.PodSelector, what string) (*corev1.Pod, *Result) {
	pods, err := evidence.Pods(ctx, e.Clients.Kube, sel.Namespace, sel.Name, sel.Selector)
	if err != nil {
		r := e.fail("list Pods: %v", err)
		return nil, &r
	}
	dropped := ""
	if sel.Name == "" {
		if pods, dropped, err = e.controlled(ctx, sel.Namespace, pods); err != nil {
			r := e.fail("%v", err)
			return nil, &r
		}
	}
	for i := range pods {
		if pods[i].DeletionTimestamp == nil && evidence.Ready(&pods[i]) {
			return &pods[i], nil
		}
	}
	summary := fmt.Sprintf("no Ready %s %s", describePods(sel), what)
	if dropped != "" {
		summary += "; " + dropped
	}
	r := e.traced(ctx, sel, nil, summary)
	return nil, &r
}

// logLimit bounds how much of a log a check reads: the lines it looks for are near the start or the end.
const logLimit = 256 << 10

// logs reads a container's log as `kubectl logs` shows it to the learner.
func (e Env) logs(ctx context.Context, c *scenarios.LogsCheck) Result {
	pod, failed := e.readyPod(ctx, c.PodSelector, "to read the log of")
	if failed != nil {
		return *failed
	}
	limit := int64(logLimit)
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	out, err := e.Clients.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: c.Container, LimitBytes: &limit}).DoRaw(ctx)
	cmd := fmt.Sprintf("kubectl -n %s logs %s -c %s", pod.Namespace, pod.Name, c.Container)
	if err != nil {
		return e.fail("%s failed: %v", cmd, err)
	}
	if strings.Contains(string(out), c.Contains) {
		return pass("%s: %s", cmd, snippet(out))
	}
	return e.fail("%s printed %q, want %q", cmd, snippet(out), c.Contains)
}

// exec runs a command in the first Ready matching Pod, as `kubectl exec` does.
func (e Env) exec(ctx context.Context, c *scenarios.ExecCheck) Result {
	pod, failed := e.readyPod(ctx, c.PodSelector, fmt.Sprintf("to run %q in", strings.Join(c.Command, " ")))
	if failed != nil {
		return *failed
	}
	req := e.Clients.Kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: c.Container, Command: c.Command, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(e.Clients.Config, "POST", req.URL())
	if err != nil {
		return e.fail("exec in %s: %v", pod.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	// Two buffers: the executor copies stdout and stderr in goroutines of their own, and one shared
	// bytes.Buffer (not safe for concurrent writes) lost the whole output of about one exec in three.
	var out, stderr bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &stderr})
	stdout := out.String()
	out.Write(stderr.Bytes())
	cmd := fmt.Sprintf("kubectl -n %s exec %s -- %s", pod.Namespace, pod.Name, strings.Join(c.Command, " "))
	ok := err == nil && strings.Contains(out.String(), c.Contains)
	if c.Equals != "" {
		ok = err == nil && strings.TrimSpace(stdout) == c.Equals
	}
	if c.Fails {
		ok = err != nil
	}
	if ok {
		return pass("%s: %s", cmd, snippet(out.Bytes()))
	}
	if err != nil {
		return e.fail("%s failed: %v: %s", cmd, err, snippet(out.Bytes()))
	}
	if c.Fails {
		return e.fail("%s succeeded, want it to fail: %s", cmd, snippet(out.Bytes()))
	}
	if c.Equals != "" {
		return e.fail("%s printed %q, want exactly %q", cmd, snippet(out.Bytes()), c.Equals)
	}
	return e.fail("%s printed %q, want %q", cmd, snippet(out.Bytes()), c.Contains)
}
