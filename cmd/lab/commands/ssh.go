package commands

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/mattn/go-isatty"
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
			ns, err := cl.Nodes()
			if err != nil {
				return err
			}
			var names []string
			node := ""
			for _, n := range ns {
				names = append(names, n.String())
				if n.String() == args[0] || n.String() == cl.Name+"-"+args[0] {
					node = n.String()
				}
			}
			if node == "" {
				return fmt.Errorf("cluster %s has no node %q (nodes: %s)", cl.Name, args[0], strings.Join(names, ", "))
			}
			bin, err := docker.Path()
			if err != nil {
				return err
			}
			interactive := isatty.IsTerminal(os.Stdin.Fd())
			command := args[1:]
			if len(command) == 0 {
				if !interactive {
					return errors.New("no terminal for an interactive shell: give a command, e.g. `lab ssh worker -- crictl ps`")
				}
				// Replace lab with docker so the shell owns the terminal, as ssh would.
				return syscall.Exec(bin, []string{docker.Binary, "exec", "-it", "-e", "PS1=root@" + node + ":\\w# ", node, "bash"}, os.Environ())
			}
			dargs := []string{"exec", "-i"}
			if interactive && isatty.IsTerminal(os.Stdout.Fd()) {
				dargs = append(dargs, "-t")
			}
			// The learner's command runs as long as the learner wants, like a command over the exam's ssh.
			call := docker.Call{Timeout: docker.Interactive, Stdin: os.Stdin, Stdout: f.Out, Stderr: f.ErrOut}
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
