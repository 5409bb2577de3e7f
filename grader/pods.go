package grader

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/journey/evidence"
	"github.com/cka-lab/lab/scenarios"
)

func (e Env) podsReady(ctx context.Context, c *scenarios.PodsReady) Result {
	pods, err := evidence.Pods(ctx, e.Clients.Kube, c.Namespace, c.Name, c.Selector)
	if err != nil {
		return e.fail("list Pods in %s: %v", c.Namespace, err)
	}
	want := max(c.Count, 1)
	ready, elsewhere, other := 0, "", ""
	o := &owners{e: e, ns: c.Namespace}
	for _, p := range pods {
		if !evidence.Ready(&p) {
			continue
		}
		if c.Name == "" {
			ok, why, err := o.current(ctx, &p)
			if err != nil {
				return e.fail("%v", err)
			}
			if !ok {
				other = why
				continue
			}
		}
		if why := containerImages(&p, c.Containers); why != "" {
			other = why
			continue
		}
		if c.Node != "" && p.Spec.NodeName != c.Node {
			elsewhere = fmt.Sprintf("Pod %s is Ready on node %s, not on %s", p.Name, p.Spec.NodeName, c.Node)
			continue
		}
		ready++
	}
	what := describePods(c.PodSelector)
	if ready >= want {
		return pass("%d/%d %s Running and Ready", ready, len(pods), what)
	}
	if elsewhere != "" {
		return Result{Evidence: elsewhere, Stage: journey.Scheduling}
	}
	summary := fmt.Sprintf("%d of %d %s Ready (want %d)", ready, len(pods), what, want)
	if other != "" {
		summary += "; " + other
	}
	return e.traced(ctx, c.PodSelector, nil, summary)
}

// containerImages says why p does not run the images want names by container, "" when it does.
func containerImages(p *corev1.Pod, want map[string]string) string {
	names := slices.Sorted(maps.Keys(want))
	for _, name := range names {
		i := slices.IndexFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == name })
		if i < 0 {
			return fmt.Sprintf("Pod %s has no container %s", p.Name, name)
		}
		if got := p.Spec.Containers[i].Image; !sameImage(got, want[name]) {
			return fmt.Sprintf("Pod %s's container %s runs %s, want %s", p.Name, name, got, want[name])
		}
	}
	return ""
}

// traced fails with the journey's verdict on the selected Pods: the stage they stopped at and why.
func (e Env) traced(ctx context.Context, sel scenarios.PodSelector, svc *journey.ServiceInfo, summary string) Result {
	prefix := sel.Name
	if prefix == "" {
		prefix = selectorApp(sel.Selector)
	}
	tr, err := evidence.Trace(ctx, e.Clients.Kube, sel.Namespace, sel.Name, sel.Selector, prefix, svc)
	if err != nil {
		return e.fail("%s; reading evidence: %v", summary, err)
	}
	if tr.Stopped == "" {
		return e.fail("%s", summary)
	}
	return Result{Evidence: fmt.Sprintf("%s: stopped at %s: %s", summary, tr.Stopped, tr.Evidence), Stage: tr.Stopped}
}

// selectorApp guesses the workload name from an app=NAME selector, to find its controller's events.
func selectorApp(sel string) string {
	for _, term := range strings.Split(sel, ",") {
		if k, v, ok := strings.Cut(term, "="); ok && (k == "app" || k == "app.kubernetes.io/name") {
			return v
		}
	}
	return ""
}

func describePods(s scenarios.PodSelector) string {
	if s.Name != "" {
		return fmt.Sprintf("Pod %s/%s", s.Namespace, s.Name)
	}
	return fmt.Sprintf("Pods %s in %s", s.Selector, s.Namespace)
}

func (e Env) podState(ctx context.Context, c *scenarios.PodState) Result {
	pods, err := evidence.Pods(ctx, e.Clients.Kube, c.Namespace, c.Name, c.Selector)
	if err != nil {
		return e.fail("list Pods in %s: %v", c.Namespace, err)
	}
	if len(pods) == 0 {
		return e.fail("no %s exist", describePods(c.PodSelector))
	}
	var seen []string
	for _, p := range pods {
		state := podSummary(&p)
		seen = append(seen, p.Name+": "+state)
		if c.Phase != "" && string(p.Status.Phase) != c.Phase {
			continue
		}
		if len(c.Reason) > 0 && !slices.ContainsFunc(reasons(&p), func(r string) bool { return slices.Contains(c.Reason, r) }) {
			continue
		}
		if c.Ready != nil && evidence.Ready(&p) != *c.Ready {
			continue
		}
		if c.Scheduled != nil && (p.Spec.NodeName != "") != *c.Scheduled {
			continue
		}
		return pass("Pod %s is %s", p.Name, state)
	}
	return e.fail("no Pod in the expected state: %s", strings.Join(seen, "; "))
}

// reasons are every status reason a learner would read in `kubectl get pod` or describe.
func reasons(p *corev1.Pod) []string {
	out := []string{p.Status.Reason}
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, s := range list {
			if s.State.Waiting != nil {
				out = append(out, s.State.Waiting.Reason)
			}
			if s.State.Terminated != nil {
				out = append(out, s.State.Terminated.Reason)
			}
			if s.LastTerminationState.Terminated != nil {
				out = append(out, s.LastTerminationState.Terminated.Reason)
			}
		}
	}
	return out
}

func podSummary(p *corev1.Pod) string {
	parts := []string{string(p.Status.Phase)}
	for _, r := range reasons(p) {
		if r != "" && !slices.Contains(parts, r) {
			parts = append(parts, r)
		}
	}
	if evidence.Ready(p) {
		parts = append(parts, "Ready")
	} else {
		parts = append(parts, "not Ready")
	}
	if p.Spec.NodeName == "" {
		parts = append(parts, "unscheduled")
	} else {
		parts = append(parts, "on "+p.Spec.NodeName)
	}
	return strings.Join(parts, ", ")
}

func (e Env) event(ctx context.Context, c *scenarios.EventCheck) Result {
	evs, err := evidence.EventsFor(ctx, e.Clients.Kube, c.Namespace, c.Kind, c.NamePrefix)
	if err != nil {
		return e.fail("list events in %s: %v", c.Namespace, err)
	}
	for _, ev := range evs {
		if (c.Reason == "" || ev.Reason == c.Reason) && strings.Contains(ev.Message, c.Message) {
			return pass("%s %s: %s", ev.Reason, ev.InvolvedObject.Name, ev.Message)
		}
	}
	return e.fail("no %s event with %q about %s %s* in %s (%d events seen)", c.Reason, c.Message, c.Kind, c.NamePrefix, c.Namespace, len(evs))
}
