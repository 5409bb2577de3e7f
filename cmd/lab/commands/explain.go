package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/journey/evidence"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/scenarios"
)

// explanation is a journey traced from the live cluster, with what it was traced for.
type explanation struct {
	subject  string
	result   journey.Result
	symptoms []symptomResult
}

type symptomResult struct {
	name   string
	result grader.Result
}

func newExplainCmd(f *Factory) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "explain",
		Short: "Draw the scenario's Pod journey from the live cluster: what passed, where it stops, and the evidence",
		Long: `explain traces the current scenario's workload from live cluster evidence (the Pod, its events, its
node, its claims, its Service) and draws the journey from kubectl to Running + Ready: the handoffs that
passed, the one where it stops with the event or condition that shows it, and the commands to investigate.
A task about an API request with no Pod is traced from a server-side dry run of that request.
Run it again after your fix: the whole chain passes. It shows where the Pod stopped, so record your own
diagnosis first (` + "`lab diagnose`" + `).`,
		Example: "  lab explain\n  lab explain -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(output); err != nil {
				return err
			}
			sess, err := f.Session(cmd.Context())
			if err != nil {
				return err
			}
			_, inst, err := currentInstance(f, sess)
			if err != nil {
				return err
			}
			ex, err := explain(cmd.Context(), sess, inst)
			if err != nil {
				return err
			}
			if output == "json" {
				return json.NewEncoder(f.Out).Encode(ex.result)
			}
			ex.print(f.Out)
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "output format: json (journey.Result)")
	return c
}

// explain traces the scenario's workload: the Pods its checks (or symptoms) select, else the API request of its
// symptoms.
func explain(ctx context.Context, sess *session.Session, inst *scenarios.Instance) (*explanation, error) {
	kc := sess.Cluster.Clients.Kube
	if sel, ok := workload(inst); ok {
		svc, err := serviceInfo(ctx, sess, inst, sel.Namespace)
		if err != nil {
			return nil, err
		}
		prefix := sel.Name
		if prefix == "" {
			prefix = appOf(sel.Selector)
		}
		res, err := evidence.Trace(ctx, kc, sel.Namespace, sel.Name, sel.Selector, prefix, svc)
		if err != nil {
			return nil, fmt.Errorf("trace the Pods of %s: %w", inst.ID, err)
		}
		return &explanation{subject: describeSelector(sel), result: res}, nil
	}
	return explainRequest(ctx, sess, inst)
}

// workload is the first Pod selector of the scenario's checks, then of its symptoms.
func workload(inst *scenarios.Instance) (scenarios.PodSelector, bool) {
	for _, list := range [][]scenarios.Check{inst.Checks, inst.Symptom} {
		for _, c := range list {
			switch {
			case c.PodsReady != nil:
				return c.PodsReady.PodSelector, true
			case c.PodState != nil:
				return c.PodState.PodSelector, true
			}
		}
	}
	return scenarios.PodSelector{}, false
}

func describeSelector(sel scenarios.PodSelector) string {
	if sel.Name != "" {
		return fmt.Sprintf("Pod %s in namespace %s", sel.Name, sel.Namespace)
	}
	return fmt.Sprintf("Pods %s in namespace %s", sel.Selector, sel.Namespace)
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

// serviceInfo finds the Service the scenario's checks put in front of the workload, and counts its ready
// endpoints; nil when there is none.
func serviceInfo(ctx context.Context, sess *session.Session, inst *scenarios.Instance, ns string) (*journey.ServiceInfo, error) {
	name := ""
	for _, c := range append(append(append([]scenarios.Check{}, inst.Checks...), inst.Collateral...), inst.Symptom...) {
		switch {
		case c.Endpoints != nil && c.Endpoints.Namespace == ns:
			name = c.Endpoints.Service
		case c.HTTP != nil && c.HTTP.Namespace == ns:
			name = c.HTTP.Service
		}
		if name != "" {
			break
		}
	}
	if name == "" {
		return nil, nil
	}
	sl, err := sess.Cluster.Clients.Kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return nil, fmt.Errorf("list the endpoints of Service %s/%s: %w", ns, name, err)
	}
	info := &journey.ServiceInfo{Name: name}
	for _, s := range sl.Items {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				info.ReadyEndpoints++
			}
		}
	}
	return info, nil
}

// explainRequest traces a task with no Pod (RBAC, admission) from its symptoms: an admission symptom's dry
// run yields the API server's own error, which the journey classifies; without one, a can-i symptom that still
// says no stops at authorization.
func explainRequest(ctx context.Context, sess *session.Session, inst *scenarios.Instance) (*explanation, error) {
	env := grader.Env{Clients: sess.Cluster.Clients, Nodes: sess.Cluster.Nodes, Stage: journey.Stage(inst.Stage)}
	ex := &explanation{}
	var admission, canI *symptomResult
	var admissionAs, canIAs string
	for _, c := range inst.Symptom {
		ex.symptoms = append(ex.symptoms, symptomResult{c.Name, grader.Evaluate(ctx, env, c)})
		last := &ex.symptoms[len(ex.symptoms)-1]
		switch {
		case c.Admission != nil && !c.Admission.Allowed && admission == nil:
			admission, admissionAs = last, c.Admission.As
		case c.CanI != nil && !c.CanI.Allowed && canI == nil:
			canI, canIAs = last, c.CanI.As
		}
	}
	// A symptom that no longer holds means the request now gets through: the API server's stages pass.
	switch {
	case admission != nil:
		ex.subject, ex.result = "the request "+requester(admissionAs)+" (server-side dry run)", requestJourney("", "", "")
		if admission.result.OK {
			ex.result = journey.Trace(journey.Evidence{APIError: admission.result.Evidence})
		}
	case canI != nil:
		ex.subject, ex.result = "the request "+requester(canIAs)+" (access review)", requestJourney("", "", "")
		if canI.result.OK {
			ex.result = requestJourney(journey.Authorization, "RBAC does not allow this request", canI.result.Evidence)
		}
	default:
		return nil, fmt.Errorf("scenario %s has no Pod and no API request to trace", inst.ID)
	}
	return ex, nil
}

func requester(as string) string {
	if as == "" {
		return "of your kubeconfig's user"
	}
	return "as " + as
}

// requestJourney is the journey of a request that creates no Pod: the API server's stages pass up to stop,
// and the Pod's stages do not apply.
func requestJourney(stop journey.Stage, detail, evidence string) journey.Result {
	res := journey.Result{Stopped: stop, Evidence: evidence}
	for _, s := range journey.Stages() {
		h := journey.Handoff{Stage: s}
		switch {
		case stop != "" && s == stop:
			h.Status, h.Detail = journey.Failed, detail
		case stop != "" && s.Index() > stop.Index():
			h.Status = journey.NotReached
		case s.Index() <= journey.Persistence.Index():
			h.Status = journey.Passed
		default:
			h.Status, h.Detail = journey.Skipped, "no Pod: the task is about an API request"
		}
		res.Handoffs = append(res.Handoffs, h)
	}
	return res
}

func (ex *explanation) print(w io.Writer) {
	fmt.Fprintf(w, "Journey of %s\n\n", ex.subject)
	journey.Render(w, ex.result, useColor(w))
	if len(ex.symptoms) > 0 {
		fmt.Fprintln(w, "\nSymptoms (the fault as the task shows it):")
		for _, s := range ex.symptoms {
			state := paint(w, color.FgRed)("present")
			if !s.result.OK {
				state = paint(w, color.FgGreen)("gone   ")
			}
			fmt.Fprintf(w, "  %s  %s: %s\n", state, s.name, s.result.Evidence)
		}
	}
	if ex.result.Stopped == "" {
		fmt.Fprintln(w, "\nEvery handoff passes. `lab check` grades it.")
	}
}

// useColor: colour only on a terminal, and never with NO_COLOR or when stdout is piped (color.NoColor).
func useColor(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && !color.NoColor && isatty.IsTerminal(f.Fd())
}

// paint returns a colouring function for output to w: plain text unless w is a terminal.
func paint(w io.Writer, attrs ...color.Attribute) func(...any) string {
	c := color.New(attrs...)
	if useColor(w) {
		c.EnableColor()
	} else {
		c.DisableColor()
	}
	return c.SprintFunc()
}
