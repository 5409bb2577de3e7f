package commands

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/injector/webhook"
	"github.com/cka-lab/lab/internal/operator"
)

// newWebhookCmd is the entrypoint of lab's admission webhook image, whose only file is this binary.
func newWebhookCmd() *cobra.Command {
	c := &cobra.Command{Use: "webhook", Short: "Run lab's admission webhook server (inside the cluster)", Hidden: true}
	o := webhook.ServeOptions{}
	serve := &cobra.Command{
		Use:  "serve",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return webhook.Serve(cmd.Context(), o) },
	}
	serve.Flags().StringVar(&o.Addr, "addr", webhook.DefaultAddr, "listen address")
	serve.Flags().StringVar(&o.CertFile, "cert", "", "TLS certificate file")
	serve.Flags().StringVar(&o.KeyFile, "key", "", "TLS key file")
	serve.Flags().StringVar(&o.Policy, "policy", "", "policy to enforce")
	c.AddCommand(serve)
	return c
}

// newOperatorCmd is the entrypoint of the operator lab deploys for the custom-resource scenarios, from the same
// image as the webhook.
func newOperatorCmd() *cobra.Command {
	o := operator.Options{}
	c := &cobra.Command{
		Use:    "operator",
		Short:  "Run lab's operator for one custom resource (inside the cluster)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   func(cmd *cobra.Command, _ []string) error { return operator.Serve(cmd.Context(), o) },
	}
	c.Flags().StringVar(&o.Resource, "resource", "", "custom resource to reconcile, as plural.version.group")
	c.Flags().StringVar(&o.Name, "name", "lab-operator", "field manager and managed-by label")
	c.Flags().DurationVar(&o.Interval, "interval", operator.DefaultInterval, "how often every object is reconciled")
	return c
}

// newGradeCmd runs the grader's ginkgo suite; `lab check` starts it as a child process because ginkgo runs a
// suite once per process.
func newGradeCmd(f *Factory) *cobra.Command {
	var planFile, dir string
	c := &cobra.Command{
		Use:    "__grade",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := grader.ReadPlan(planFile)
			if err != nil {
				return err
			}
			f.ClusterName = plan.Cluster
			cl, err := f.Cluster(cmd.Context())
			if err != nil {
				return err
			}
			env := grader.Env{Clients: cl.Clients, Nodes: cl.Nodes}
			if !grader.Grade(plan, env, dir, isTerminal(f.Out), grader.ProgressReporter()) {
				return &ExitError{Code: 1, Silent: true, Err: fmt.Errorf("not passed")}
			}
			return nil
		},
	}
	c.Flags().StringVar(&planFile, "plan", "", "grading plan (JSON)")
	c.Flags().StringVar(&dir, "report-dir", "", "where ginkgo writes its reports")
	return c
}
