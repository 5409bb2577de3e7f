package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/docker"
	"github.com/cka-lab/lab/internal/examhost"
	"github.com/cka-lab/lab/internal/session"
)

func newSSHCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "ssh NODE|HOST [-- COMMAND...]",
		Short: "Open a shell on a node or an exam's host (like the exam's ssh), or run one command there",
		Example: `  lab ssh worker                       # lab-worker, interactive
  lab ssh lab-control-plane -- crictl ps
  lab ssh worker -- systemctl status kubelet
  lab ssh cka1024 -- kubectl get nodes  # an exam question's host`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Flags stop at NODE, so a "--" after it is lab's to drop, not part of the command.
			if len(args) > 1 && args[1] == "--" {
				args = append(args[:1], args[2:]...)
			}
			if done, err := sshExamHost(f, cmd, args[0], args[1:]); done {
				return err
			}
			cl, err := hostCluster(cmd.Context(), f)
			if err != nil {
				return err
			}
			n, err := cl.Node(args[0])
			if err != nil {
				return err
			}
			node := n.String()
			bin, err := docker.Path()
			if err != nil {
				return err
			}
			in := cmd.InOrStdin()
			interactive := isTerminal(in)
			command := args[1:]
			if len(command) == 0 {
				if !interactive {
					return errors.New("no terminal for an interactive shell: give a command, e.g. `lab ssh worker -- crictl ps`")
				}
				// Replace lab with docker so the shell owns the terminal, as ssh would.
				return syscall.Exec(bin, []string{docker.Binary, "exec", "-it", "-e", "PS1=root@" + node + ":\\w# ", node, "bash"}, os.Environ())
			}
			dargs := []string{"exec", "-i"}
			if interactive && isTerminal(f.Out) {
				dargs = append(dargs, "-t")
			}
			// The learner's command runs as long as the learner wants, like a command over the exam's ssh.
			call := docker.Call{Timeout: docker.Interactive, Stdin: in, Stdout: f.Out, Stderr: f.ErrOut}
			if err := call.Run(cmd.Context(), append(append(dargs, node), command...)...); err != nil {
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					return &ExitError{Code: ee.ExitCode(), Silent: true, Err: err}
				}
				return err
			}
			return nil
		},
	}
	// Everything after NODE is the remote command, flags included, as ssh takes it: ssh cka1024 kubectl get pods -A.
	c.Flags().SetInterspersed(false)
	return c
}

// sshExamHost opens the shell of the running exam's host name, or runs command there, and says whether name
// was one: the exam's hosts are names, not nodes, and need no cluster to reach.
func sshExamHost(f *Factory, cmd *cobra.Command, name string, command []string) (bool, error) {
	st, err := f.Store()
	if err != nil {
		return false, nil
	}
	argv, env, err := session.ExamHostsOf(st, f.ClusterName).Shell(name, command)
	if errors.Is(err, examhost.ErrNoHost) || name == "" {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	// The exam knows which question the candidate is on by the host they are on, as time per question.
	if i, err := session.FocusHost(cmd.Context(), st, f.ClusterName, name); err != nil {
		fmt.Fprintf(f.ErrOut, "warning: %v\n", err)
	} else if i >= 0 && len(command) == 0 {
		fmt.Fprintf(f.ErrOut, "Question %d, on host %s.\n", i+1, name)
	}
	return true, runShell(f, cmd, argv, env, len(command) == 0)
}

// hostCluster is the cluster whose nodes ssh reaches: from an exam host's shell, the cluster of that host's
// question (which may be one lab created for the exam), else the lab cluster.
func hostCluster(ctx context.Context, f *Factory) (*cluster.Cluster, error) {
	host := os.Getenv(examhost.HostEnv)
	st, err := f.Store()
	if host == "" || err != nil {
		return f.Cluster(ctx)
	}
	name, err := session.HostCluster(st, f.ClusterName, host)
	if err != nil || name == f.ClusterName {
		return f.Cluster(ctx)
	}
	p, err := f.Provider()
	if err != nil {
		return nil, err
	}
	return p.Get(ctx, name)
}

// runShell runs a shell of the exam: in place of lab when it is interactive, so it owns the terminal as an
// ssh session would, else as a command whose exit code lab passes on.
func runShell(f *Factory, cmd *cobra.Command, argv, env []string, interactive bool) error {
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("the exam's shells need %s: %w", argv[0], err)
	}
	if interactive {
		if !isTerminal(cmd.InOrStdin()) {
			return errors.New("no terminal for an interactive shell: give a command, e.g. `lab ssh cka1024 -- kubectl get nodes`")
		}
		return syscall.Exec(bin, argv, os.Environ())
	}
	c := exec.CommandContext(cmd.Context(), bin, argv[1:]...)
	c.Env = append(os.Environ(), env...)
	c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), f.Out, f.ErrOut
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return &ExitError{Code: ee.ExitCode(), Silent: true, Err: err}
		}
		return err
	}
	return nil
}
