// Package commands holds lab's cobra commands; each one follows kubectl's shape: options completed from flags
// and state, validated before any cluster work, then run.
package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/internal/state"
	"github.com/cka-lab/lab/internal/ui"
	"github.com/cka-lab/lab/scenarios"
)

// ExitError ends lab with a code; Silent when the command already said why (a failed check).
type ExitError struct {
	Code   int
	Silent bool
	Err    error
}

func (e *ExitError) Error() string { return e.Err.Error() }

// Main runs lab with args on the given streams and returns the process exit code.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go onInterrupt(sigs, done, cancel, errOut, os.Exit)
	root := NewRoot(in, out, errOut)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if !ee.Silent {
			fmt.Fprintf(errOut, "error: %s\n", oneLine(ee.Err.Error()))
		}
		return ee.Code
	}
	if ctx.Err() != nil {
		// An exam's start spans its clusters and hosts: its own stop is what restores them all.
		if cmd != nil && strings.HasPrefix(cmd.CommandPath(), "lab exam") {
			fmt.Fprintln(errOut, "error: interrupted; `lab exam status` shows what was left and `lab exam stop` restores the cluster")
		} else {
			fmt.Fprintln(errOut, "error: interrupted; `lab status` shows what was left and `lab reset` restores the cluster")
		}
		return 130
	}
	fmt.Fprintf(errOut, "error: %s\n", oneLine(err.Error()))
	return 1
}

// onInterrupt cancels the command at the first interrupt, so it stops where it can and says what it left;
// at a second one it exits at once with 130, for a command that does not stop soon enough (a wait that does
// not heed the context, a child that ignores the signal). It returns when done closes.
func onInterrupt(sigs <-chan os.Signal, done <-chan struct{}, cancel context.CancelFunc, errOut io.Writer, exit func(int)) {
	select {
	case <-done:
		return
	case <-sigs:
		cancel()
	}
	select {
	case <-done:
	case <-sigs:
		fmt.Fprintln(errOut, "error: interrupted again: exited at once, without cleaning up; `lab status` (in an exam `lab exam status`) shows what was left")
		exit(130)
	}
}

// oneLine keeps multi-error messages on one line each, indented, so the first line says what to do.
func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n       ") }

// Factory gives commands what they share: the streams, lab's state, the cluster name.
type Factory struct {
	In          io.Reader
	Out, ErrOut io.Writer
	ClusterName string
}

// Store opens lab's state directory.
func (f *Factory) Store() (*state.Store, error) { return state.Open() }

// Status prints step lines to stderr, like kind.
func (f *Factory) Status() *ui.Status { return ui.New(f.ErrOut) }

// Provider returns the lab cluster provider.
func (f *Factory) Provider() (*cluster.Provider, error) {
	st, err := f.Store()
	if err != nil {
		return nil, err
	}
	return cluster.NewProvider(cluster.WithStore(st), cluster.WithStatus(f.Status()), cluster.WithKindLogger(kindLogger())), nil
}

// Cluster returns the lab cluster after proving it is lab's, or in a shared-cluster class the learner's namespace.
func (f *Factory) Cluster(ctx context.Context) (*cluster.Cluster, error) {
	if c, shared, err := f.sharedCluster(); shared {
		return c, err
	}
	p, err := f.Provider()
	if err != nil {
		return nil, err
	}
	return p.Get(ctx, f.ClusterName)
}

// Session returns a session on the verified lab cluster.
func (f *Factory) Session(ctx context.Context) (*session.Session, error) {
	c, err := f.Cluster(ctx)
	if err != nil {
		return nil, err
	}
	st, err := f.Store()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	sess := &session.Session{Cluster: c, Store: st, Status: f.Status(), Self: self}
	// A shared cluster is not lab's to multiply: its exam stays on it.
	if !c.Shared() {
		if sess.Provider, err = f.Provider(); err != nil {
			return nil, err
		}
	}
	return sess, nil
}

// Catalog returns the scenario catalogue.
func (f *Factory) Catalog() (*scenarios.Catalog, error) { return scenarios.Builtin() }

// NewRoot builds the command tree on the given streams.
func NewRoot(in io.Reader, out, errOut io.Writer) *cobra.Command {
	f := &Factory{In: in, Out: out, ErrOut: errOut}
	root := &cobra.Command{
		Use:   "lab",
		Short: "A CKA practice lab: real kind clusters broken at one stage of a Pod's journey, graded live",
		Long: `lab brings up a real kind cluster, breaks it at exactly one stage of a Pod's journey
(kubectl -> API server -> etcd -> scheduler -> kubelet -> volumes -> sandbox and CNI -> init containers
-> image -> container -> app -> readiness -> Service, NetworkPolicy, DNS, API access),
shows an exam-style task, and grades your fix with checks against the live cluster.`,
		Example: `  lab cluster create          # a 2-node kind cluster, images preloaded
  lab list                    # the scenarios, by stage
  lab start taint-dedicated-node
  lab check                   # grade your fix`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if _, ok := os.LookupEnv("NO_COLOR"); ok {
				color.NoColor = true
			}
			return examGuard(f, cmd)
		},
	}
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	def := cluster.DefaultName
	if n := os.Getenv("LAB_CLUSTER"); n != "" {
		def = n
	}
	root.PersistentFlags().StringVar(&f.ClusterName, "name", def, "lab cluster name (env LAB_CLUSTER)")
	root.AddCommand(
		newClusterCmd(f), newImagesCmd(f), newListCmd(f), newStartCmd(f), newCheckCmd(f), newResetCmd(f),
		newStatusCmd(f), newHintCmd(f), newSolutionCmd(f), newSSHCmd(f), newScenarioCmd(f),
		newWebhookCmd(), newOperatorCmd(), newGradeCmd(f),
		newDiagnoseCmd(f), newExplainCmd(f), newStopCmd(f), newExamCmd(f), newProgressCmd(f), newDrillCmd(f),
		newBenchCmd(f), newClassCmd(f), newBundleCmd(f), newVersionCmd(f), newDoctorCmd(f),
	)
	return root
}

// options are a command's options in kubectl's shape: completed from flags, arguments and lab's state,
// validated before any cluster work, then run.
type options interface {
	complete(f *Factory, cmd *cobra.Command, args []string) error
	validate() error
	run(ctx context.Context, f *Factory) error
}

// runE runs o's complete, validate and run in turn, as a command's RunE.
func runE(f *Factory, o options) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.complete(f, cmd, args); err != nil {
			return err
		}
		if err := o.validate(); err != nil {
			return err
		}
		return o.run(cmd.Context(), f)
	}
}
