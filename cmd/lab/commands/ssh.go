package commands

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/docker"
)

func newSSHCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "ssh NODE [-- COMMAND...]",
		Short: "Open a shell on a node (like the exam's ssh), or run one command there",
		Example: `  lab ssh worker                       # lab-worker, interactive
  lab ssh lab-control-plane -- crictl ps
  lab ssh worker -- systemctl status kubelet`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := f.Cluster(cmd.Context())
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
}
