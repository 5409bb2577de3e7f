package grader

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the grading child when lab itself is killed (SIGKILL cannot be caught, so
// the context never cancels): an orphaned grader would keep probing the cluster into the next attempt.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
