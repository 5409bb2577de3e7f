package evidence

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/scenarios"
)

// now is the clock restarts are judged by; tests replay recorded evidence at the time it was recorded.
var now = time.Now

// Explanation is a journey traced from the live cluster, with what was traced.
type Explanation struct {
	// Subject names what was traced, e.g. "deployment/web in namespace shop (Pod web-7d9c-x2k)".
	Subject string
	journey.Result
}

// Explain traces what the target names, from live evidence: the Pod of the workload's current revision that
// is not Ready (or the first), its events, node and claims, its controller's events and rollout, and, once it
// runs, the Service in front, the NetworkPolicies, cluster DNS (a lookup from inside the Pod) and the API
// requests its logs show refused. cfg runs the lookup; nil leaves it out.
func Explain(ctx context.Context, cfg *rest.Config, kc kubernetes.Interface, t Target) (*Explanation, error) {
	w, pods, err := resolve(ctx, kc, t)
	if err != nil {
		return nil, err
	}
	pod := pick(w, pods)
	switch {
	case w == nil && pod != nil:
		w = ownerOf(ctx, kc, pod)
	case w == nil && t.Selector != "":
		w = ownerOfSelector(ctx, kc, t.Namespace, t.Selector)
	}
	ev, err := forPod(ctx, kc, t.Namespace, pod, eventOwners(ctx, kc, t, w, pod))
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w", t, err)
	}
	ev.Now = now()
	if pod != nil {
		ev.LastLog = lastLogs(ctx, kc, pod)
	}
	if w != nil {
		info := w.info
		if pods, err := workloadPods(ctx, kc, t.Namespace, w); err == nil {
			info.OldReady = oldReady(w, pods)
		}
		ev.Workload = &info
	}
	if pod != nil && pod.Status.Phase == corev1.PodRunning {
		ev.Traffic = traffic(ctx, cfg, kc, pod)
		svc, err := frontService(ctx, kc, pod, t.Service, appName(pod, w))
		if err != nil {
			return nil, err
		}
		if svc != nil {
			if ev.Service, err = serviceInfo(ctx, kc, svc, pod, ingressIsolated(ev.Traffic.Policies, pod)); err != nil {
				return nil, err
			}
		}
	}
	subject := t.String()
	if pod != nil {
		subject += fmt.Sprintf(" (Pod %s)", pod.Name)
	} else {
		subject += " (no Pod)"
	}
	return &Explanation{Subject: subject, Result: journey.Trace(ev)}, nil
}

// eventOwners reports the controllers whose events belong to the trace: the workload's own (a Deployment and
// its current ReplicaSet), else the Pod's owner chain, else, with no Pod, workloads named like the target.
func eventOwners(ctx context.Context, kc kubernetes.Interface, t Target, w *workload, pod *corev1.Pod) func(string) bool {
	if w != nil {
		names := map[string]bool{}
		for _, n := range w.events {
			names[n] = true
		}
		return func(name string) bool { return names[name] }
	}
	prefix := t.Name
	if prefix == "" {
		prefix = appOf(t.Selector)
	}
	return ownerNames(ctx, kc, t.Namespace, pod, prefix)
}

// appName is what the Pod's Service is usually called: its workload's name, else its app label.
func appName(pod *corev1.Pod, w *workload) string {
	if w != nil {
		return w.info.Name
	}
	for _, k := range []string{"app", "app.kubernetes.io/name"} {
		if v := pod.Labels[k]; v != "" {
			return v
		}
	}
	return ""
}

// appOf finds the workload name in an app=NAME selector, so a Deployment's events are found before any Pod
// exists.
func appOf(sel string) string {
	for _, term := range strings.Split(sel, ",") {
		if k, v, ok := strings.Cut(term, "="); ok && (k == "app" || k == "app.kubernetes.io/name") {
			return v
		}
	}
	return ""
}

// ingressIsolated reports a NetworkPolicy that isolates the Pod's ingress: a connection lab makes could then
// be dropped by the policy rather than refused by the Pod.
func ingressIsolated(policies []networkingv1.NetworkPolicy, pod *corev1.Pod) bool {
	for _, p := range policies {
		sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		for _, typ := range p.Spec.PolicyTypes {
			if typ == networkingv1.PolicyTypeIngress {
				return true
			}
		}
		if len(p.Spec.PolicyTypes) == 0 {
			return true
		}
	}
	return false
}

// ScenarioTargets are the workloads a scenario's task is about, in the order the learner meets them: the Pods
// behind each Service its checks reach, then the Pods its checks and symptoms run commands in (the learner's
// vantage point, e.g. the client whose lookups fail), then the Pods they want Ready. None for a task without a
// Pod (RBAC, admission).
func ScenarioTargets(inst *scenarios.Instance) []Target {
	all := slices.Concat(inst.Checks, inst.Collateral, inst.Symptom)
	var out []Target
	add := func(t Target) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	touched := make([]scenarios.Footprint, len(all))
	for i := range all {
		touched[i] = all[i].Touches()
	}
	for _, fp := range touched {
		for _, svc := range fp.Services {
			add(Target{Namespace: svc.Namespace, Service: svc.Name})
		}
	}
	for _, access := range []scenarios.Access{scenarios.AccessExec, scenarios.AccessState} {
		for _, fp := range touched {
			for _, p := range fp.Pods {
				if p.Access == access {
					add(Target{Namespace: p.Namespace, Name: p.Name, Selector: p.Selector})
				}
			}
		}
	}
	return out
}

// ExplainFirst traces the targets in turn and returns the first whose journey stops; when every one passes,
// the first. A target that is not there (a Service the fix has yet to create) is passed over.
func ExplainFirst(ctx context.Context, cfg *rest.Config, kc kubernetes.Interface, targets []Target) (*Explanation, error) {
	var first *Explanation
	var firstErr error
	for _, t := range targets {
		ex, err := Explain(ctx, cfg, kc, t)
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		if ex.Stopped != "" {
			return ex, nil
		}
		if first == nil {
			first = ex
		}
	}
	if first == nil {
		return nil, cmp.Or(firstErr, errors.New("nothing to trace"))
	}
	return first, nil
}

// lastLogs reads the last line each container that exited with an error wrote, and each init container that
// still runs: what the app said before it died, or what an init container waits for, is often the whole
// diagnosis.
func lastLogs(ctx context.Context, kc kubernetes.Interface, pod *corev1.Pod) map[string]string {
	out := map[string]string{}
	for i, st := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		t := st.State.Terminated
		previous := t == nil && st.State.Running == nil
		if previous {
			t = st.LastTerminationState.Terminated
		}
		waits := i < len(pod.Status.InitContainerStatuses) && st.State.Running != nil
		if !waits && (t == nil || t.ExitCode == 0) {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, logTimeout)
		raw, err := kc.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
			Container: st.Name, Previous: previous, TailLines: ptr.To(int64(20)), LimitBytes: ptr.To(int64(64 << 10)),
		}).DoRaw(lctx)
		cancel()
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		if last := oneLine(lines[len(lines)-1]); last != "" {
			if len(last) > 200 {
				last = last[:200] + "..."
			}
			out[st.Name] = last
		}
	}
	return out
}
