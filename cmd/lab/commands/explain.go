package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/journey/evidence"
	"github.com/cka-lab/lab/internal/session"
)

type explainOptions struct {
	out       outputFlags
	namespace string
	kind      string
	name      string
}

// explanation is what explain prints: the journey, and for a task about an API request its symptoms.
type explanation struct {
	evidence.Explanation
	symptoms []grader.Symptom
	// graded: the trace is of the current scenario, which lab check grades.
	graded bool
}

func newExplainCmd(f *Factory) *cobra.Command {
	o := &explainOptions{}
	c := &cobra.Command{
		Use:   "explain [KIND/NAME]",
		Short: "Draw a Pod's journey from the live cluster: what passed, where it stops, and the evidence",
		Long: `explain traces a workload from live cluster evidence and draws its Pod's journey from kubectl to
Running + Ready and on to the traffic it serves: the handoffs that passed, the one where it stops with the
event, condition or field that shows it, and the commands to look further.

Point it at anything on a lab cluster (deploy/web, pod/web-7d9c-x2k, sts/db, ds/agent, job/backup, rs/...,
with -n NAMESPACE), with or without a scenario running; without an argument it traces the current
scenario's workload (a task about an API request with no Pod is traced from a server-side dry run of that
request). It only reads: the Pod, its events, node and claims, its controller's rollout, the Service in
front, the NetworkPolicies that select it, cluster DNS (a name lookup run inside the Pod) and the 403s in
its containers' recent logs. Record your own diagnosis first (` + "`lab diagnose`" + `): explain shows
where the Pod stopped.`,
		Example: "  lab explain\n  lab explain deploy/web -n shop\n  lab explain pod/web-7d9c-x2k -n shop -o json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			return o.run(cmd.Context(), f)
		},
	}
	o.out.addFlags(c)
	c.Flags().StringVarP(&o.namespace, "namespace", "n", "", "namespace of KIND/NAME (default: default)")
	return c
}

func (o *explainOptions) complete(args []string) error {
	if err := o.out.validate(); err != nil {
		return err
	}
	if len(args) == 0 {
		if o.namespace != "" {
			return errors.New("--namespace goes with KIND/NAME: lab explain deploy/web -n " + o.namespace)
		}
		return nil
	}
	var err error
	o.kind, o.name, err = journey.ParseWorkload(args[0])
	return err
}

func (o *explainOptions) run(ctx context.Context, f *Factory) error {
	sess, err := f.Session(ctx)
	if err != nil {
		return err
	}
	var ex *explanation
	if o.kind != "" {
		ex, err = o.explainWorkload(ctx, sess)
	} else {
		ex, err = explainScenario(ctx, f, sess)
	}
	if err != nil {
		return err
	}
	if o.out.json() {
		return json.NewEncoder(f.Out).Encode(ex.Explanation)
	}
	ex.print(f.Out)
	return nil
}

func (o *explainOptions) explainWorkload(ctx context.Context, sess *session.Session) (*explanation, error) {
	ns := o.namespace
	if ns == "" {
		ns = sess.Cluster.Namespace
	}
	if ns == "" {
		ns = "default"
	}
	c := sess.Cluster.Clients
	e, err := evidence.Explain(ctx, c.Config, c.Kube, evidence.Target{Kind: o.kind, Namespace: ns, Name: o.name})
	if err != nil {
		return nil, err
	}
	return &explanation{Explanation: *e}, nil
}

// explainScenario traces the current scenario's workload, or the API request of a task without one.
func explainScenario(ctx context.Context, f *Factory, sess *session.Session) (*explanation, error) {
	a, err := sess.Current(ctx)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, fmt.Errorf("no scenario is running on cluster %s: name what to explain (lab explain deploy/web -n shop), or start a scenario (lab list)", sess.Cluster.Name)
	}
	_, inst, err := currentInstance(ctx, f, sess)
	if err != nil {
		return nil, err
	}
	c := sess.Cluster.Clients
	if targets := evidence.ScenarioTargets(inst); len(targets) > 0 {
		e, err := evidence.ExplainFirst(ctx, c.Config, c.Kube, targets)
		if err != nil {
			return nil, fmt.Errorf("trace the Pods of %s: %w", inst.ID, err)
		}
		return &explanation{Explanation: *e, graded: true}, nil
	}
	env := grader.Env{Clients: c, Nodes: sess.Cluster.Nodes, Stage: journey.Stage(inst.Stage)}
	subject, res, symptoms, err := grader.ExplainRequest(ctx, env, inst.Symptom)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", inst.ID, err)
	}
	return &explanation{Explanation: evidence.Explanation{Subject: subject, Result: res}, symptoms: symptoms, graded: true}, nil
}

func (ex *explanation) print(w io.Writer) {
	fmt.Fprintf(w, "Journey of %s\n\n", ex.Subject)
	journey.Render(w, ex.Result, useColor(w))
	if len(ex.symptoms) > 0 {
		fmt.Fprintln(w, "\nSymptoms (the fault as the task shows it):")
		for _, s := range ex.symptoms {
			state := paint(w, color.FgRed)("present")
			if !s.Result.OK {
				state = paint(w, color.FgGreen)("gone   ")
			}
			fmt.Fprintf(w, "  %s  %s: %s\n", state, s.Name, s.Result.Evidence)
		}
	}
	switch {
	case ex.Stopped == "" && ex.graded:
		fmt.Fprintln(w, "\nEvery handoff passes. `lab check` grades it.")
	case ex.Stopped == "":
		fmt.Fprintln(w, "\nEvery handoff passes.")
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
